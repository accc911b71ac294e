// What the Client4 test files share: the environment they read, a signed-in
// Client4, where alice and bob start, the shape of an id, and the check of a
// refused call. Not a test
// file itself (node --test runs only the *.test.mjs files).

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
export const { Client4, ClientError } = require('@mattermost/client');

// A variable of the environment, or an error that says how to set it.
export const env = (name) => {
    const value = process.env[name];
    if (!value) {
        throw new Error(`${name} is not set: start the emulator (porter mmsim --seed demo) and set MM_URL and the tokens`);
    }
    return value;
};

// A Mattermost id: 26 lowercase letters and digits.
export const ID = /^[a-z0-9]{26}$/;

// A Client4 for the emulator at `url`, signed in with `token` when given.
export function client(token, url = env('MM_URL')) {
    const c = new Client4();
    c.setUrl(url);
    if (token) {
        c.setToken(token);
    }
    return c;
}

// Where alice (a Client4 signed in as her) and bob (as him) start: their own
// users, the demo team and its town-square, as alice sees them.
export async function demoStart(alice, bob) {
    const me = await alice.getMe();
    const bobUser = await bob.getMe();
    const [team] = await alice.getMyTeams();
    const townSquare = await alice.getChannelByName(team.id, 'town-square');
    return { me, bobUser, team, townSquare };
}

// Asserts that `promise` fails as Client4 reports a server's refusal: with
// this HTTP status and (when given) this server error id.
export async function rejectsWith(promise, status, serverErrorId) {
    await assert.rejects(promise, (err) => {
        assert.ok(err instanceof ClientError, `a ClientError, not ${err}`);
        assert.equal(err.status_code, status, err.message);
        if (serverErrorId) {
            assert.equal(err.server_error_id, serverErrorId);
        }
        assert.equal(typeof err.message, 'string');
        return true;
    });
}
