// Client4 against porter-mmsim for teams, channels and people: a team's
// public and archived channels, creating a channel (and the names the
// server refuses), channel members and stats, joining, adding and
// removing people, marking a channel read, and presence (status and
// custom status). Every call is Client4's own, unchanged; a failing call
// or a wrong shape means the emulator is wrong.
//
// Environment: as client4.test.mjs (MM_URL, MM_TOKEN for alice,
// MM_TOKEN_BOB) against the demo seed, whose users have the passwords
// demo-<name>-password and carol the MFA code 123456.
//
// The files of this directory share one emulator, and client4.test.mjs
// expects alice's channels and the demo's posts as they are: so the
// channels made here are bob's, the people moved in and out are carol
// (signed in with her password) and bob, posts go only into the channels
// made here, and alice only reads and sets her own status.

import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';

import { ID, client, demoStart, env, rejectsWith } from './helpers.mjs';


function assertChannel(channel) {
    assert.match(channel.id, ID);
    assert.equal(typeof channel.name, 'string');
    assert.equal(typeof channel.display_name, 'string');
    for (const key of ['create_at', 'update_at', 'delete_at', 'total_msg_count']) {
        assert.equal(typeof channel[key], 'number', key);
    }
}

// A URL name no other run or file uses.
const unique = (prefix) => `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;

describe('Client4 and teams, channels and people', () => {
    const alice = client(env('MM_TOKEN'));
    const bob = client(env('MM_TOKEN_BOB'));
    const carol = client();
    let me;
    let bobUser;
    let carolUser;
    let daveUser;
    let team;
    let townSquare;
    let open;
    let closed;

    before(async () => {
        ({ me, bobUser, team, townSquare } = await demoStart(alice, bob));
        carolUser = await carol.login('carol', 'demo-carol-password', '123456');
        daveUser = await alice.getUserByUsername('dave');
        open = await bob.createChannel({
            team_id: team.id,
            name: unique('client4-open'),
            display_name: 'Client4 open room',
            type: 'O',
            purpose: 'Made by channels.test.mjs',
            header: 'A header',
        });
        closed = await bob.createChannel({
            team_id: team.id,
            name: unique('client4-closed'),
            display_name: 'Client4 closed room',
            type: 'P',
        });
    });

    test('createChannel answers the new channel with its creator as the only member', async () => {
        assertChannel(open);
        assert.equal(open.team_id, team.id);
        assert.equal(open.type, 'O');
        assert.equal(open.display_name, 'Client4 open room');
        assert.equal(open.purpose, 'Made by channels.test.mjs');
        assert.equal(open.header, 'A header');
        assert.equal(open.delete_at, 0);
        assert.equal(closed.type, 'P');
        assert.deepEqual(await bob.getChannel(open.id), open);
        const members = await bob.getChannelMembers(open.id);
        assert.deepEqual(members.map((m) => m.user_id), [bobUser.id]);
        assert.equal(members[0].channel_id, open.id);
    });

    test('createChannel refuses a taken name, an archived channel’s name and a bad name', async () => {
        await rejectsWith(
            bob.createChannel({ team_id: team.id, name: open.name, display_name: 'Again', type: 'O' }),
            400,
            'store.sql_channel.save_channel.exists.app_error',
        );
        await rejectsWith(
            bob.createChannel({ team_id: team.id, name: 'launch-2025', display_name: 'Launch', type: 'O' }),
            400,
            'store.sql_channel.save_channel.previously.app_error',
        );
        await rejectsWith(
            bob.createChannel({ team_id: team.id, name: 'Not A Name', display_name: 'Bad', type: 'O' }),
            400,
            'model.channel.is_valid.2_or_more.app_error',
        );
        await rejectsWith(
            bob.createChannel({ team_id: team.id, name: unique('no-display'), display_name: '', type: 'O' }),
            400,
            'model.channel.is_valid.display_name.app_error',
        );
    });

    test('getChannels lists the team’s public channels, joined or not, without archived or private ones', async () => {
        const all = await alice.getChannels(team.id, 0, 200);
        all.forEach(assertChannel);
        const names = all.map((c) => c.name);
        for (const name of ['town-square', 'off-topic', 'files', open.name]) {
            assert.ok(names.includes(name), `${name} in ${names}`);
        }
        for (const name of ['design', 'launch-2025', closed.name]) {
            assert.ok(!names.includes(name), `${name} not in ${names}`);
        }
        assert.ok(all.every((c) => c.type === 'O' && c.delete_at === 0 && c.team_id === team.id));
        const first = await alice.getChannels(team.id, 0, 1);
        const second = await alice.getChannels(team.id, 1, 1);
        assert.equal(first.length, 1);
        assert.equal(second.length, 1);
        assert.notEqual(first[0].id, second[0].id);
    });

    test('getArchivedChannels lists the team’s archived channels', async () => {
        const archived = await alice.getArchivedChannels(team.id, 0, 100);
        archived.forEach(assertChannel);
        assert.deepEqual(archived.map((c) => c.name), ['launch-2025']);
        assert.ok(archived[0].delete_at > 0);
    });

    test('addToChannel adds someone, getChannelStats counts them and removeFromChannel takes them out', async () => {
        const before = await bob.getChannelStats(open.id, true);
        assert.equal(before.channel_id, open.id);
        assert.equal(before.member_count, 1);
        assert.equal(before.pinnedpost_count, 0);
        assert.equal(before.files_count, 0);

        const member = await bob.addToChannel(carolUser.id, open.id);
        assert.equal(member.channel_id, open.id);
        assert.equal(member.user_id, carolUser.id);
        assert.equal(typeof member.msg_count, 'number');
        const ids = (await bob.getChannelMembers(open.id, 0, 60)).map((m) => m.user_id).sort();
        assert.deepEqual(ids, [bobUser.id, carolUser.id].sort());
        assert.equal((await bob.getChannelStats(open.id)).member_count, 2);

        assert.deepEqual(await bob.removeFromChannel(carolUser.id, open.id), { status: 'OK' });
        assert.deepEqual((await bob.getChannelMembers(open.id)).map((m) => m.user_id), [bobUser.id]);
        await rejectsWith(bob.removeFromChannel(carolUser.id, open.id), 404, 'app.channel.get_member.missing.app_error');
    });

    test('addToChannels adds several at once and refuses a deactivated account', async () => {
        const added = await bob.addToChannels([carolUser.id], closed.id);
        assert.ok(Array.isArray(added));
        assert.deepEqual(added.map((m) => [m.channel_id, m.user_id]), [[closed.id, carolUser.id]]);
        await rejectsWith(
            bob.addToChannels([daveUser.id], closed.id),
            400,
            'api.channel.add_user.to.channel.failed.deleted.app_error',
        );
        assert.deepEqual((await bob.getChannelMembers(closed.id)).map((m) => m.user_id).sort(), [bobUser.id, carolUser.id].sort());
        assert.deepEqual(await carol.removeFromChannel(carolUser.id, closed.id), { status: 'OK' });
    });

    test('joining a public channel is addToChannel with one’s own id; leaving is removeFromChannel', async () => {
        const joined = await carol.addToChannel(carolUser.id, open.id);
        assert.equal(joined.user_id, carolUser.id);
        assert.equal((await carol.getMyChannelMember(open.id)).channel_id, open.id);
        assert.deepEqual(await carol.removeFromChannel(carolUser.id, open.id), { status: 'OK' });
        await rejectsWith(carol.getMyChannelMember(open.id), 404);
    });

    test('people outside a private channel cannot add to it or see its members; nobody leaves town-square', async () => {
        await rejectsWith(carol.addToChannel(carolUser.id, closed.id), 403, 'api.context.permissions.app_error');
        await rejectsWith(carol.getChannelMembers(closed.id), 403);
        await rejectsWith(carol.getChannelStats(closed.id), 403);
        await rejectsWith(alice.removeFromChannel(bobUser.id, open.id), 403, 'api.context.permissions.app_error');
        await rejectsWith(
            bob.removeFromChannel(bobUser.id, townSquare.id),
            400,
            'api.channel.remove.default.app_error',
        );
    });

    test('viewMyChannel marks a channel read for oneself', async () => {
        await carol.addToChannel(carolUser.id, open.id);
        await bob.createPost({ channel_id: open.id, message: 'Something for carol to read (channels.test.mjs).' });
        const unread = await carol.getMyChannelMember(open.id);
        const channel = await carol.getChannel(open.id);
        assert.ok(unread.msg_count < channel.total_msg_count, 'the new post is unread');
        const answer = await carol.viewMyChannel(open.id);
        assert.equal(answer.status, 'OK');
        assert.equal(typeof answer.last_viewed_at_times[open.id], 'number');
        const read = await carol.getMyChannelMember(open.id);
        assert.equal(read.msg_count, channel.total_msg_count);
        assert.equal(read.mention_count, 0);
        assert.equal(read.last_viewed_at, answer.last_viewed_at_times[open.id]);
        await carol.removeFromChannel(carolUser.id, open.id);
    });

    test('getStatus, updateStatus and getStatusesByIds: presence set by hand, do-not-disturb with an end', async () => {
        const first = await alice.getStatus(me.id);
        assert.equal(first.user_id, me.id);
        assert.ok(['online', 'away', 'dnd', 'offline'].includes(first.status), first.status);

        const until = Math.floor(Date.now() / 1000) + 3600;
        const set = await alice.updateStatus({ user_id: me.id, status: 'dnd', dnd_end_time: until });
        assert.equal(set.user_id, me.id);
        assert.equal(set.status, 'dnd');
        assert.equal(set.manual, true);
        assert.equal(set.dnd_end_time, until);
        assert.equal((await bob.getStatus(me.id)).status, 'dnd');

        const both = await bob.getStatusesByIds([me.id, bobUser.id]);
        assert.deepEqual(both.map((s) => s.user_id).sort(), [me.id, bobUser.id].sort());
        assert.equal(both.find((s) => s.user_id === me.id).status, 'dnd');

        const back = await alice.updateStatus({ user_id: me.id, status: 'online' });
        assert.equal(back.status, 'online');
        assert.equal(back.dnd_end_time, 0);
        await rejectsWith(alice.updateStatus({ user_id: bobUser.id, status: 'away' }), 403, 'api.context.permissions.app_error');
        await rejectsWith(alice.updateStatus({ user_id: me.id, status: 'busy' }), 400);
        await rejectsWith(alice.getStatus('nosuchuser0000000000000000'), 404);
    });

    test('updateCustomStatus keeps it in the user’s props and unsetCustomStatus clears it', async () => {
        const expires = new Date(Date.now() + 86400000).toISOString();
        const custom = { emoji: 'palm_tree', text: 'On holiday', duration: 'date_and_time', expires_at: expires };
        assert.deepEqual(await carol.updateCustomStatus(custom), { status: 'OK' });
        const kept = JSON.parse((await bob.getUser(carolUser.id)).props.customStatus);
        assert.equal(kept.emoji, 'palm_tree');
        assert.equal(kept.text, 'On holiday');
        assert.equal(kept.duration, 'date_and_time');
        assert.equal(kept.expires_at, expires);
        await rejectsWith(
            carol.updateCustomStatus({ emoji: '', text: '' }),
            400,
            'api.custom_status.set_custom_statuses.update.app_error',
        );
        await rejectsWith(carol.updateCustomStatus({ emoji: 'x', text: 'x'.repeat(101) }), 400);

        assert.deepEqual(await carol.unsetCustomStatus(), { status: 'OK' });
        assert.equal((await carol.getMe()).props?.customStatus, undefined);
    });
});
