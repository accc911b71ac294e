// Client4 against porter-mmsim for reading more and changing posts:
// channel stats, the account list, pins, saved (flagged) posts, followed
// threads, edits, deletions and reactions. Every call is one the Mattermost
// web app makes, unchanged; a failing call or a wrong shape means the
// emulator is wrong.
//
// Environment: MM_URL, MM_TOKEN (alice), MM_TOKEN_BOB — the demo emulator
// (`porter mmsim --seed demo`), as for client4.test.mjs.

import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';

import { ID, client, env, rejectsWith } from './helpers.mjs';


function assertPostList(list) {
    assert.ok(Array.isArray(list.order), 'order');
    assert.equal(typeof list.posts, 'object', 'posts');
    for (const id of list.order) {
        assert.match(id, ID);
        assert.equal(list.posts[id].id, id);
    }
}

describe('reading more and changing posts', () => {
    let alice;
    let bob;
    let me;
    let bobUser;
    let team;
    let channel;

    before(async () => {
        alice = client(env('MM_TOKEN'));
        bob = client(env('MM_TOKEN_BOB'));
        me = await alice.getMe();
        bobUser = await bob.getMe();
        [team] = await alice.getMyTeams();
        const channels = await alice.getMyChannels(team.id);
        channel = channels.find((c) => c.name === 'town-square');
        assert.ok(channel, 'the demo has ~town-square');
    });

    test('getProfiles lists accounts by username, paged', async () => {
        const all = await alice.getProfiles(0, 200);
        assert.ok(all.length >= 3);
        const names = all.map((u) => u.username);
        assert.deepEqual(names, [...names].sort());
        const first = await alice.getProfiles(0, 1);
        const second = await alice.getProfiles(1, 1);
        assert.equal(first.length, 1);
        assert.notEqual(first[0].id, second[0].id);
    });

    test('getChannelStats counts active members and pinned posts', async () => {
        const stats = await alice.getChannelStats(channel.id, true);
        assert.equal(stats.channel_id, channel.id);
        assert.equal(typeof stats.member_count, 'number');
        assert.ok(stats.member_count >= 2);
        assert.equal(typeof stats.pinnedpost_count, 'number');
        assert.equal(typeof stats.files_count, 'number');
        const without = await alice.getChannelStats(channel.id, false);
        assert.equal(without.files_count, -1);
    });

    test('pinPost and unpinPost change what getPinnedPosts and the stats list', async () => {
        const post = await bob.createPost({ channel_id: channel.id, message: 'Pin me, please.' });
        const before = (await alice.getChannelStats(channel.id)).pinnedpost_count;
        assert.deepEqual(await alice.pinPost(post.id), { status: 'OK' });
        const pinned = await alice.getPinnedPosts(channel.id);
        assertPostList(pinned);
        assert.ok(pinned.order.includes(post.id));
        assert.equal(pinned.posts[post.id].is_pinned, true);
        assert.equal((await alice.getChannelStats(channel.id)).pinnedpost_count, before + 1);
        assert.deepEqual(await alice.unpinPost(post.id), { status: 'OK' });
        assert.ok(!(await alice.getPinnedPosts(channel.id)).order.includes(post.id));
    });

    test('patchPost edits one\'s own post and sets edit_at; another\'s is forbidden', async () => {
        const post = await alice.createPost({ channel_id: channel.id, message: 'Frist draft' });
        const edited = await alice.patchPost({ id: post.id, message: 'First draft', props: { ai_generated_by: me.id } });
        assert.equal(edited.message, 'First draft');
        assert.ok(edited.edit_at > 0);
        assert.equal(edited.props.ai_generated_by, me.id);
        await rejectsWith(bob.patchPost({ id: post.id, message: 'hijacked' }), 403);
        assert.equal((await alice.getPost(post.id)).message, 'First draft');
    });

    test('deletePost takes a thread\'s replies with its root; another\'s post is forbidden', async () => {
        const root = await alice.createPost({ channel_id: channel.id, message: 'A thread to delete' });
        const reply = await bob.createPost({ channel_id: channel.id, root_id: root.id, message: 'a reply' });
        await rejectsWith(bob.deletePost(root.id), 403);
        assert.deepEqual(await alice.deletePost(root.id), { status: 'OK' });
        await rejectsWith(alice.getPost(root.id), 404);
        await rejectsWith(alice.getPost(reply.id), 404);
    });

    test('addReaction, getReactionsForPost and removeReaction', async () => {
        const post = await bob.createPost({ channel_id: channel.id, message: 'React to me' });
        const reaction = await alice.addReaction(me.id, post.id, '+1');
        assert.equal(reaction.user_id, me.id);
        assert.equal(reaction.post_id, post.id);
        assert.equal(reaction.emoji_name, '+1');
        assert.equal(typeof reaction.create_at, 'number');
        const again = await alice.addReaction(me.id, post.id, '+1');
        assert.equal(again.create_at, reaction.create_at, 'the same reaction twice is one reaction');
        let list = await alice.getReactionsForPost(post.id);
        assert.equal(list.length, 1);
        assert.equal((await alice.getPost(post.id)).has_reactions, true);
        await rejectsWith(alice.addReaction(bobUser.id, post.id, 'tada'), 403);
        await rejectsWith(alice.addReaction(me.id, post.id, 'not an emoji!'), 400);
        assert.deepEqual(await alice.removeReaction(me.id, post.id, '+1'), { status: 'OK' });
        list = await alice.getReactionsForPost(post.id);
        assert.equal(list.length, 0);
        await rejectsWith(bob.removeReaction(me.id, post.id, '+1'), 403);
    });

    test('savePreferences with flagged_post makes getFlaggedPosts list the post', async () => {
        const post = await bob.createPost({ channel_id: channel.id, message: 'Save me for later' });
        const ok = await alice.savePreferences(me.id, [{ user_id: me.id, category: 'flagged_post', name: post.id, value: 'true' }]);
        assert.deepEqual(ok, { status: 'OK' });
        const flagged = await alice.getFlaggedPosts(me.id);
        assertPostList(flagged);
        assert.equal(flagged.order[0], post.id);
        await rejectsWith(bob.getFlaggedPosts(me.id), 403);
    });

    test('getUserThreads lists the threads one takes part in, most recent reply first', async () => {
        const root = await alice.createPost({ channel_id: channel.id, message: 'Thread for the list' });
        await bob.createPost({ channel_id: channel.id, root_id: root.id, message: 'a reply, @alice' });
        const list = await alice.getUserThreads(me.id, team.id, { perPage: 5 });
        assert.equal(typeof list.total, 'number');
        assert.equal(typeof list.total_unread_threads, 'number');
        assert.ok(list.threads.length >= 1);
        const [newest] = list.threads;
        assert.equal(newest.id, root.id);
        assert.equal(newest.post.id, root.id);
        assert.equal(newest.reply_count, 1);
        assert.equal(newest.unread_replies, 1);
        assert.equal(newest.unread_mentions, 1);
        assert.ok(newest.participants.some((p) => p.id === bobUser.id));
        const older = await alice.getUserThreads(me.id, team.id, { before: root.id, perPage: 5 });
        assert.ok(!older.threads.some((t) => t.id === root.id));
        await rejectsWith(bob.getUserThreads(me.id, team.id, {}), 403);
    });
});
