// Client4 against porter-mmsim for a person's own state: signing in with
// a password, typing, followed threads, preferences (saved posts), post
// reminders and drafts. Every call is Client4's own, unchanged; typing has
// no Client4 method (the web app sends it over the WebSocket), so it goes
// through Client4's own fetch to the REST route the server also serves.
//
// Environment: as client4.test.mjs (MM_URL, MM_TOKEN for alice,
// MM_TOKEN_BOB) against the demo seed, whose users have the passwords
// demo-<name>-password and carol the MFA code 123456.

import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';

import { ID, client, demoStart, env, rejectsWith } from './helpers.mjs';

const MM_URL = env('MM_URL');
const TOKEN = env('MM_TOKEN');
const TOKEN_BOB = env('MM_TOKEN_BOB');

describe('Client4 and a person’s own state', () => {
    const alice = client(TOKEN);
    const bob = client(TOKEN_BOB);
    let me;
    let bobUser;
    let team;
    let townSquare;
    let design;
    let root;

    before(async () => {
        ({ me, bobUser, team, townSquare } = await demoStart(alice, bob));
        design = await alice.getChannelByName(team.id, 'design');
        const posts = await alice.getPosts(townSquare.id, 0, 60);
        root = posts.order.map((id) => posts.posts[id]).find((p) => p.root_id === '');
        assert.ok(root, 'town-square has a root post');
    });

    test('login with a password answers the user and a working session token', async () => {
        const fresh = client();
        const profile = await fresh.login('alice', 'demo-alice-password');
        assert.equal(profile.id, me.id);
        assert.equal(profile.password, undefined);
        const token = fresh.getToken();
        assert.match(token, ID);
        assert.notEqual(token, TOKEN);
        assert.equal((await fresh.getMe()).username, 'alice');
        const byEmail = client();
        assert.equal((await byEmail.login('alice@example.com', 'demo-alice-password')).id, me.id);
    });

    test('login refuses a wrong password, a missing MFA code and a deactivated account', async () => {
        await rejectsWith(client().login('alice', 'wrong'), 401, 'api.user.login.invalid_credentials_email_username');
        await rejectsWith(client().login('nobody', 'x'), 401, 'api.user.login.invalid_credentials_email_username');
        await rejectsWith(client().login('carol', 'demo-carol-password'), 401, 'mfa.validate_token.authenticate.app_error');
        await rejectsWith(client().login('carol', 'demo-carol-password', '000000'), 401, 'mfa.validate_token.authenticate.app_error');
        const carol = client();
        assert.equal((await carol.login('carol', 'demo-carol-password', '123456')).username, 'carol');
        await rejectsWith(client().login('dave', 'demo-dave-password'), 401, 'api.user.login.inactive.app_error');
    });

    test('typing is accepted in a member channel and refused elsewhere', async () => {
        const url = `${alice.getUserRoute('me')}/typing`;
        const answer = await alice.doFetch(url, { method: 'post', body: JSON.stringify({ channel_id: townSquare.id, parent_id: root.id }) });
        assert.equal(answer.status, 'OK');
        const carol = client();
        await carol.login('carol', 'demo-carol-password', '123456');
        await rejectsWith(
            carol.doFetch(`${carol.getUserRoute('me')}/typing`, { method: 'post', body: JSON.stringify({ channel_id: design.id }) }),
            403,
            'api.context.permissions.app_error',
        );
        await rejectsWith(
            alice.doFetch(`${alice.getUserRoute(bobUser.id)}/typing`, { method: 'post', body: JSON.stringify({ channel_id: townSquare.id }) }),
            403,
        );
    });

    test('updateThreadFollowForUser follows and unfollows a root post only', async () => {
        assert.equal((await alice.updateThreadFollowForUser(me.id, team.id, root.id, true)).status, 'OK');
        assert.equal((await alice.updateThreadFollowForUser(me.id, team.id, root.id, false)).status, 'OK');
        const thread = await alice.getPostThread(root.id);
        const reply = Object.values(thread.posts).find((p) => p.root_id === root.id);
        if (reply) {
            await rejectsWith(alice.updateThreadFollowForUser(me.id, team.id, reply.id, true), 400);
        }
        await rejectsWith(alice.updateThreadFollowForUser(bobUser.id, team.id, root.id, true), 403);
        await rejectsWith(alice.updateThreadFollowForUser(me.id, team.id, 'nosuchpostnosuchpostnosuch', true), 404);
    });

    test('savePreferences, getMyPreferences and deletePreferences keep saved posts', async () => {
        const flagged = { user_id: me.id, category: 'flagged_post', name: root.id, value: 'true' };
        assert.equal((await alice.savePreferences(me.id, [flagged])).status, 'OK');
        let mine = await alice.getMyPreferences();
        assert.ok(Array.isArray(mine));
        // Other files of this directory save posts of their own as alice: look at this one.
        const thisOne = (list) => list.filter((p) => p.category === 'flagged_post' && p.name === root.id);
        assert.deepEqual(thisOne(mine), [flagged]);
        assert.equal((await alice.savePreferences(me.id, [flagged])).status, 'OK');
        mine = await alice.getMyPreferences();
        assert.equal(thisOne(mine).length, 1, 'saving twice keeps one');
        assert.deepEqual((await bob.getMyPreferences()).filter((p) => p.category === 'flagged_post'), []);
        await rejectsWith(alice.savePreferences(bobUser.id, [{ ...flagged, user_id: bobUser.id }]), 403);
        await rejectsWith(alice.savePreferences(me.id, [{ ...flagged, user_id: bobUser.id }]), 403);
        assert.equal((await alice.deletePreferences(me.id, [flagged])).status, 'OK');
        assert.deepEqual(thisOne(await alice.getMyPreferences()), []);
    });

    test('addPostReminder takes a future time in seconds and refuses a past one', async () => {
        const inAnHour = Math.floor(Date.now() / 1000) + 3600;
        assert.equal((await alice.addPostReminder(me.id, root.id, inAnHour)).status, 'OK');
        await rejectsWith(alice.addPostReminder(me.id, root.id, 1000), 400);
        await rejectsWith(alice.addPostReminder(bobUser.id, root.id, inAnHour), 403);
    });

    test('upsertDraft, getUserDrafts and deleteDraft keep one draft per channel and thread', async () => {
        const draft = { user_id: me.id, channel_id: townSquare.id, root_id: '', message: 'half a thought', props: {}, file_ids: [] };
        const saved = await alice.upsertDraft(draft, 'conn-1');
        assert.equal(saved.message, 'half a thought');
        assert.equal(saved.channel_id, townSquare.id);
        assert.equal(typeof saved.create_at, 'number');
        assert.equal(typeof saved.update_at, 'number');
        const reply = await alice.upsertDraft({ ...draft, root_id: root.id, message: 'a reply' }, 'conn-1');
        assert.equal(reply.root_id, root.id);
        await alice.upsertDraft({ ...draft, message: 'a whole thought' }, 'conn-1');
        let drafts = await alice.getUserDrafts(team.id);
        assert.equal(drafts.length, 2);
        assert.deepEqual(drafts.map((d) => d.message).sort(), ['a reply', 'a whole thought']);
        assert.deepEqual(await bob.getUserDrafts(team.id), [], 'drafts are private');
        await rejectsWith(alice.upsertDraft({ ...draft, user_id: bobUser.id }, 'conn-1'), 403);
        const carol = client();
        const carolUser = await carol.login('carol', 'demo-carol-password', '123456');
        await rejectsWith(carol.upsertDraft({ ...draft, user_id: carolUser.id, channel_id: design.id }, 'c'), 403);
        await alice.deleteDraft(townSquare.id, root.id, 'conn-1');
        await alice.deleteDraft(townSquare.id, '', 'conn-1');
        drafts = await alice.getUserDrafts(team.id);
        assert.deepEqual(drafts, []);
    });
});
