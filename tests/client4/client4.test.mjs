// Mattermost's official JavaScript client (Client4) against porter-mmsim.
//
// Every call here is one the Mattermost web app makes, unchanged; a call
// that fails, or an answer whose shape differs from what Client4's types
// describe, means the emulator is wrong.
//
// Environment (set by crates/porter-mmsim/tests/client4/main.rs, or by hand
// against `porter mmsim --seed demo`):
//   MM_URL, MM_TOKEN (alice), MM_TOKEN_BOB, MM_TOKEN_CAROL  — the demo emulator
//   MM_SMALL_URL, MM_SMALL_TOKEN, MM_SMALL_MAX_FILE_SIZE    — a demo emulator
//                                                             with a small upload limit

import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';

import { ID, client, env, rejectsWith } from './helpers.mjs';

const MM_URL = env('MM_URL');
const TOKEN = env('MM_TOKEN');
const TOKEN_BOB = env('MM_TOKEN_BOB');
const TOKEN_CAROL = env('MM_TOKEN_CAROL');
const SMALL_URL = env('MM_SMALL_URL');
const SMALL_TOKEN = env('MM_SMALL_TOKEN');
const SMALL_MAX = Number(env('MM_SMALL_MAX_FILE_SIZE'));


// Shape checks, after Client4's TypeScript types (@mattermost/types).
function assertUser(user) {
    assert.match(user.id, ID);
    for (const key of ['username', 'email', 'first_name', 'last_name', 'nickname', 'position', 'roles', 'locale', 'auth_service']) {
        assert.equal(typeof user[key], 'string', `user.${key}`);
    }
    for (const key of ['create_at', 'update_at', 'delete_at']) {
        assert.equal(typeof user[key], 'number', `user.${key}`);
    }
    assert.equal(user.password, undefined, 'a password never leaves the server');
}

function assertTeam(team) {
    assert.match(team.id, ID);
    for (const key of ['name', 'display_name', 'description', 'email', 'type', 'company_name', 'allowed_domains', 'invite_id']) {
        assert.equal(typeof team[key], 'string', `team.${key}`);
    }
    assert.equal(typeof team.allow_open_invite, 'boolean');
    assert.equal(typeof team.create_at, 'number');
}

function assertChannel(channel) {
    assert.match(channel.id, ID);
    assert.ok(['O', 'P', 'D', 'G'].includes(channel.type), `channel type ${channel.type}`);
    for (const key of ['team_id', 'display_name', 'name', 'header', 'purpose', 'creator_id']) {
        assert.equal(typeof channel[key], 'string', `channel.${key}`);
    }
    for (const key of ['create_at', 'update_at', 'delete_at', 'last_post_at', 'total_msg_count', 'last_root_post_at']) {
        assert.equal(typeof channel[key], 'number', `channel.${key}`);
    }
}

function assertFileInfo(info) {
    assert.match(info.id, ID);
    assert.match(info.user_id, ID);
    assert.match(info.channel_id, ID);
    for (const key of ['name', 'extension', 'mime_type']) {
        assert.equal(typeof info[key], 'string', `file.${key}`);
    }
    for (const key of ['size', 'create_at', 'update_at', 'delete_at']) {
        assert.equal(typeof info[key], 'number', `file.${key}`);
    }
}

function assertPost(post) {
    assert.match(post.id, ID);
    assert.match(post.user_id, ID);
    assert.match(post.channel_id, ID);
    assert.ok(post.root_id === '' || ID.test(post.root_id), 'root_id is empty or an id');
    for (const key of ['message', 'type', 'hashtags', 'original_id', 'pending_post_id']) {
        assert.equal(typeof post[key], 'string', `post.${key}`);
    }
    for (const key of ['create_at', 'update_at', 'edit_at', 'delete_at', 'reply_count']) {
        assert.equal(typeof post[key], 'number', `post.${key}`);
    }
    assert.equal(typeof post.is_pinned, 'boolean');
    assert.equal(typeof post.props, 'object');
    assert.equal(typeof post.metadata, 'object');
    for (const info of post.metadata.files ?? []) {
        assertFileInfo(info);
    }
}

function assertPostList(list) {
    assert.ok(Array.isArray(list.order), 'order is an array');
    assert.equal(typeof list.posts, 'object');
    assert.equal(typeof list.next_post_id, 'string');
    assert.equal(typeof list.prev_post_id, 'string');
    for (const id of list.order) {
        assert.ok(list.posts[id], `post ${id} of order is in posts`);
    }
    for (const post of Object.values(list.posts)) {
        assertPost(post);
    }
    const times = list.order.map((id) => list.posts[id].create_at);
    assert.deepEqual(times, [...times].sort((a, b) => b - a), 'order is newest first');
}

describe('Client4 against porter-mmsim', () => {
    const alice = client(TOKEN);
    let me;
    let bob;
    let carol;
    let team;
    let townSquare;
    let filesChannel;

    before(async () => {
        me = await alice.getMe();
        [bob, carol] = await Promise.all([alice.getUserByUsername('bob'), alice.getUserByUsername('carol')]);
        [team] = await alice.getMyTeams();
        townSquare = await alice.getChannelByName(team.id, 'town-square');
        filesChannel = await alice.getChannelByName(team.id, 'files');
    });

    test('ping and the client config answer like a server', async () => {
        const ping = await alice.ping();
        assert.equal(ping.status, 'OK');
        const config = await alice.getClientConfig();
        assert.equal(typeof config.Version, 'string');
        assert.equal(config.MaxPostSize, '16383');
        assert.equal(config.MaxFileSize, String(100 * 1024 * 1024));
        assert.equal(config.SiteURL, MM_URL);
        assert.ok(alice.getServerVersion().startsWith(config.Version), 'X-Version-Id was read');
    });

    test('getMe answers the token’s user', async () => {
        assertUser(me);
        assert.equal(me.username, 'alice');
        assertUser(bob);
        assert.equal(bob.username, 'bob');
        const again = await alice.getUser(me.id);
        assert.deepEqual(again, me);
        const byIds = await alice.getProfilesByIds([me.id, bob.id]);
        assert.deepEqual(byIds.map((u) => u.username).sort(), ['alice', 'bob']);
    });

    test('getMyTeams lists the demo team', async () => {
        const teams = await alice.getMyTeams();
        assert.equal(teams.length, 1);
        teams.forEach(assertTeam);
        assert.equal(team.name, 'porter');
        assert.equal(team.display_name, 'Porter');
        assert.deepEqual(await alice.getTeamByName('porter'), team);
        assert.deepEqual(await alice.getTeam(team.id), team);
    });

    test('getChannelByName finds public and member channels', async () => {
        assertChannel(townSquare);
        assert.equal(townSquare.type, 'O');
        assert.equal(townSquare.display_name, 'Town Square');
        assert.equal(townSquare.team_id, team.id);
        const design = await alice.getChannelByName(team.id, 'design');
        assert.equal(design.type, 'P');
        assert.deepEqual(await alice.getChannel(townSquare.id), townSquare);
    });

    test('getMyChannels lists the team’s channels with the DM and group', async () => {
        const channels = await alice.getMyChannels(team.id);
        channels.forEach(assertChannel);
        const names = channels.filter((c) => c.type === 'O' || c.type === 'P').map((c) => c.name).sort();
        assert.deepEqual(names, ['design', 'files', 'off-topic', 'town-square']);
        assert.equal(channels.filter((c) => c.type === 'D').length, 1);
        assert.equal(channels.filter((c) => c.type === 'G').length, 1);
        const members = await alice.getMyChannelMembers(team.id);
        assert.equal(members.length, channels.length);
        for (const member of members) {
            assert.equal(member.user_id, me.id);
            assert.equal(typeof member.msg_count, 'number');
        }
    });

    test('getPosts pages newest first with next and previous ids', async () => {
        const first = await alice.getPosts(townSquare.id, 0, 5);
        const second = await alice.getPosts(townSquare.id, 1, 5);
        assertPostList(first);
        assertPostList(second);
        assert.equal(first.order.length, 5);
        assert.equal(second.order.length, 5);
        assert.equal(first.next_post_id, '', 'nothing is newer than the first page');
        assert.equal(first.prev_post_id, second.order[0], 'the first page points at the second');
        assert.equal(second.next_post_id, first.order[4], 'the second page points back');
        assert.equal(first.has_next, true);
        const overlap = first.order.filter((id) => second.order.includes(id));
        assert.deepEqual(overlap, []);
        assert.ok(
            first.posts[first.order[4]].create_at > second.posts[second.order[0]].create_at,
            'the pages are in sequence',
        );
        const all = await alice.getPosts(townSquare.id, 0, 60);
        assert.equal(all.order.length, 16);
        assert.equal(all.prev_post_id, '');
        assert.equal(all.has_next, false);
        const before = await alice.getPostsBefore(townSquare.id, first.order[4], 0, 5);
        assert.deepEqual(before.order, second.order);
        const after = await alice.getPostsAfter(townSquare.id, second.order[0], 0, 5);
        assert.deepEqual(after.order, first.order);
    });

    test('getPostThread answers the root and every reply', async () => {
        const all = await alice.getPosts(townSquare.id, 0, 60);
        const root = Object.values(all.posts).find((p) => p.message.startsWith('Kickoff thread'));
        assert.ok(root, 'the demo thread is in town-square');
        assert.equal(root.reply_count, 4);
        const thread = await alice.getPostThread(root.id);
        assertPostList(thread);
        assert.equal(thread.order.length, 5);
        assert.ok(thread.order.includes(root.id));
        for (const id of thread.order.filter((id) => id !== root.id)) {
            assert.equal(thread.posts[id].root_id, root.id);
        }
        const post = await alice.getPost(root.id);
        assertPost(post);
        assert.equal(post.message, root.message);
    });

    test('uploadFile, createPost with the file, its infos and its bytes round-trip', async () => {
        const bytes = new TextEncoder().encode('Hello from Client4.\nSecond line.\n');
        const form = new FormData();
        form.append('channel_id', filesChannel.id);
        form.append('client_ids', 'client-upload-1');
        form.append('files', new Blob([bytes], { type: 'text/plain' }), 'hello client4.txt');
        const upload = await alice.uploadFile(form);
        assert.deepEqual(upload.client_ids, ['client-upload-1']);
        assert.equal(upload.file_infos.length, 1);
        const info = upload.file_infos[0];
        assertFileInfo(info);
        assert.equal(info.name, 'hello client4.txt');
        assert.equal(info.extension, 'txt');
        assert.equal(info.mime_type, 'text/plain');
        assert.equal(info.size, bytes.length);
        assert.equal(info.channel_id, filesChannel.id);
        assert.equal(info.user_id, me.id);

        const post = await alice.createPost({
            channel_id: filesChannel.id,
            message: 'A file from Client4',
            file_ids: [info.id],
            props: { from_client4: true },
        });
        assertPost(post);
        assert.deepEqual(post.file_ids, [info.id]);
        assert.equal(post.metadata.files[0].id, info.id);
        assert.equal(post.props.from_client4, true);
        assert.equal(post.user_id, me.id);

        const infos = await alice.getFileInfosForPost(post.id);
        assert.equal(infos.length, 1);
        assertFileInfo(infos[0]);
        assert.equal(infos[0].id, info.id);
        assert.equal(infos[0].post_id, post.id);

        const response = await fetch(alice.getFileUrl(info.id), { headers: { Authorization: `Bearer ${TOKEN}` } });
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('content-type'), 'text/plain');
        const disposition = response.headers.get('content-disposition');
        assert.ok(disposition.startsWith('attachment;'), disposition);
        assert.ok(disposition.includes("filename*=UTF-8''hello%20client4.txt"), disposition);
        assert.deepEqual(new Uint8Array(await response.arrayBuffer()), bytes);

        const reply = await alice.createPost({ channel_id: filesChannel.id, root_id: post.id, message: 'A reply' });
        assert.equal(reply.root_id, post.id);
        const thread = await alice.getPostThread(post.id);
        assert.equal(thread.order.length, 2);
    });

    test('a demo file downloads with its bytes and type', async () => {
        const posts = await alice.getPosts(filesChannel.id, 0, 60);
        const pdfPost = Object.values(posts.posts).find((p) => (p.metadata.files ?? []).some((f) => f.name === 'handbook.pdf'));
        assert.ok(pdfPost, 'the demo has the handbook PDF');
        const infos = await alice.getFileInfosForPost(pdfPost.id);
        const pdf = infos.find((f) => f.name === 'handbook.pdf');
        assert.equal(pdf.mime_type, 'application/pdf');
        const response = await fetch(alice.getFileUrl(pdf.id), { headers: { Authorization: `BEARER ${TOKEN}` } });
        const body = new Uint8Array(await response.arrayBuffer());
        assert.equal(body.length, pdf.size);
        assert.equal(new TextDecoder().decode(body.slice(0, 5)), '%PDF-');
        const image = Object.values(posts.posts).flatMap((p) => p.metadata.files ?? []).find((f) => f.name === 'floor-plan.png');
        assert.equal(image.width, 3000);
        assert.equal(image.height, 2000);
    });

    test('createDirectChannel answers the existing DM', async () => {
        const dm = await alice.createDirectChannel([me.id, bob.id]);
        assertChannel(dm);
        assert.equal(dm.type, 'D');
        assert.equal(dm.name, [me.id, bob.id].sort().join('__'));
        const mine = await alice.getMyChannels(team.id);
        assert.equal(mine.find((c) => c.type === 'D').id, dm.id);
        const posts = await alice.getPosts(dm.id, 0, 10);
        assert.equal(posts.order.length, 2);
    });

    test('createGroupChannel answers the group of exactly those people', async () => {
        const group = await alice.createGroupChannel([me.id, bob.id, carol.id]);
        assertChannel(group);
        assert.equal(group.type, 'G');
        const again = await alice.createGroupChannel([bob.id, carol.id]);
        assert.equal(again.id, group.id, 'the caller is added when absent');
        const sent = await alice.createPost({ channel_id: group.id, message: 'Hello group' });
        assert.equal(sent.channel_id, group.id);
        await rejectsWith(alice.createGroupChannel([me.id, bob.id]), 400, 'api.channel.create_group.bad_size.app_error');
    });

    test('searchPostsWithParams understands from:, in:, dates, phrases and OR', async () => {
        const search = (terms, extra = {}) =>
            alice.searchPostsWithParams(team.id, { terms, is_or_search: false, include_deleted_channels: false, time_zone_offset: 0, page: 0, per_page: 60, ...extra });

        const fromBob = await search('from:bob in:town-square');
        assertPostList(fromBob);
        assert.equal(typeof fromBob.matches, 'object');
        assert.ok(fromBob.order.length >= 4);
        for (const id of fromBob.order) {
            assert.equal(fromBob.posts[id].user_id, bob.id);
            assert.equal(fromBob.posts[id].channel_id, townSquare.id);
        }

        const onDay = await search('in:town-square on:2026-03-03');
        assert.equal(onDay.order.length, 5);
        const dayStart = Date.UTC(2026, 2, 3);
        for (const id of onDay.order) {
            const at = onDay.posts[id].create_at;
            assert.ok(at >= dayStart && at < dayStart + 86400000, `${at} is on 2026-03-03`);
        }
        const after = await search('in:town-square after:2026-03-03');
        assert.ok(after.order.every((id) => after.posts[id].create_at >= Date.UTC(2026, 2, 4)));
        assert.equal(after.order.length, 4);
        const before = await search('in:town-square before:2026-03-03');
        assert.equal(before.order.length, 7);

        const phrase = await search('"release candidate"');
        assert.equal(phrase.order.length, 2);
        const words = await search('release candidate lunch');
        assert.equal(words.order.length, 0, 'all words are needed');
        const either = await alice.searchPostsWithParams(team.id, { terms: 'espresso coffee', is_or_search: true, page: 0, per_page: 20 });
        assert.equal(either.order.length, 2);
        const paged = await search('in:town-square', { per_page: 3, page: 1 });
        assert.equal(paged.order.length, 3);
    });

    test('getProfilesByUsernames answers the known names only', async () => {
        const users = await alice.getProfilesByUsernames(['bob', 'carol', 'nobody']);
        users.forEach(assertUser);
        assert.deepEqual(users.map((u) => u.username).sort(), ['bob', 'carol']);
        const found = await alice.searchUsers('car', {});
        assert.deepEqual(found.map((u) => u.username), ['carol']);
    });

    test('an unknown channel is a 404 ClientError', async () => {
        await rejectsWith(alice.getChannel('abcdefghijklmnopqrstuvwxyz'), 404, 'app.channel.get.existing.app_error');
        await rejectsWith(alice.getChannelByName(team.id, 'no-such-channel'), 404);
        await rejectsWith(alice.getPost('abcdefghijklmnopqrstuvwxyz'), 404);
    });

    test('a private channel without membership is a 403 ClientError', async () => {
        const asCarol = client(TOKEN_CAROL);
        const design = await alice.getChannelByName(team.id, 'design');
        await rejectsWith(asCarol.getChannel(design.id), 403, 'api.context.permissions.app_error');
        await rejectsWith(asCarol.getPosts(design.id), 403);
        await rejectsWith(asCarol.getChannelByName(team.id, 'design'), 404);
        await rejectsWith(asCarol.createPost({ channel_id: design.id, message: 'let me in' }), 403);
        const asBob = client(TOKEN_BOB);
        const seen = await asBob.getChannel(design.id);
        assert.equal(seen.id, design.id);
    });

    test('no token, or a wrong one, is a 401 ClientError', async () => {
        await rejectsWith(client(null).getMe(), 401, 'api.context.session_expired.app_error');
        await rejectsWith(client('not-a-token').getMyTeams(), 401);
    });

    test('an extra multipart field is a 400', async () => {
        const form = new FormData();
        form.append('channel_id', filesChannel.id);
        form.append('comment', 'not a field the server accepts');
        form.append('files', new Blob(['x']), 'x.txt');
        const response = await fetch(`${MM_URL}/api/v4/files`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${TOKEN}` } });
        assert.equal(response.status, 400);
        assert.equal(response.headers.get('content-type'), 'application/json');
        const body = await response.json();
        assert.equal(body.status_code, 400);
        assert.match(body.message, /comment/);
        await rejectsWith(alice.uploadFile(form), 400, 'api.context.invalid_body_param.app_error');
    });

    test('an upload over the size limit is a 413', async () => {
        const small = client(SMALL_TOKEN, SMALL_URL);
        const [smallTeam] = await small.getMyTeams();
        const channel = await small.getChannelByName(smallTeam.id, 'files');
        const form = new FormData();
        form.append('channel_id', channel.id);
        form.append('files', new Blob([new Uint8Array(SMALL_MAX + 1)]), 'too-big.bin');
        const response = await fetch(`${SMALL_URL}/api/v4/files`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${SMALL_TOKEN}` } });
        assert.equal(response.status, 413);
        assert.equal(response.headers.get('content-type'), 'application/json');
        const body = await response.json();
        assert.equal(body.id, 'api.file.upload_file.too_large_detailed.app_error');
        assert.equal(body.status_code, 413);

        const fits = new FormData();
        fits.append('channel_id', channel.id);
        fits.append('files', new Blob([new Uint8Array(SMALL_MAX)]), 'just-fits.bin');
        const accepted = await small.uploadFile(fits);
        assert.equal(accepted.file_infos[0].size, SMALL_MAX);
        assert.deepEqual(accepted.client_ids, []);
    });

    test('per_page over 200 is capped at 200', async () => {
        const small = client(SMALL_TOKEN, SMALL_URL);
        const [smallTeam] = await small.getMyTeams();
        const channel = await small.getChannelByName(smallTeam.id, 'off-topic');
        for (let n = 0; n < 205; n += 1) {
            await small.createPost({ channel_id: channel.id, message: `filler ${n}` });
        }
        const response = await fetch(`${SMALL_URL}/api/v4/channels/${channel.id}/posts?page=0&per_page=500`, { headers: { Authorization: `Bearer ${SMALL_TOKEN}` } });
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('content-type'), 'application/json');
        const list = await response.json();
        assert.equal(list.order.length, 200);
        const next = await small.getPosts(channel.id, 1, 500);
        assert.equal(next.order.length, 208 - 200, 'page 1 of 200 holds the rest');
    });

    test('an unknown API route is a JSON 404, never a web page', async () => {
        const response = await fetch(`${MM_URL}/api/v4/no/such/route`, { headers: { Authorization: `Bearer ${TOKEN}` } });
        assert.equal(response.status, 404);
        assert.equal(response.headers.get('content-type'), 'application/json');
        const body = await response.json();
        assert.equal(body.id, 'api.context.404.app_error');
        await rejectsWith(alice.getPluginStatuses(), 404);
    });
});
