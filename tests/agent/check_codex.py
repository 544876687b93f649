#!/usr/bin/env python3
"""The coding-agent recipe (docs/agents.md), run for real: the Codex CLI from
npm (@openai/codex, pinned), installed once into build/agent the way
`npm install -g` installs it, run under `aasm-launch --profile
coding-agent-codex` as root and as uid 65534, against a mock of the
OpenAI Responses API on 127.0.0.29:443 that answers with two tool calls:
`touch out/x` (inside the workspace) and `touch ../outside/x` (outside it).
Codex runs each as a subprocess of its own; under the sandbox the first
succeeds and the second fails with ENOENT (the filesystem view has no such
path), while the same run outside the sandbox creates both (the control).
Also: `codex --version` and `--help` under the sandbox, offline.

The agent is installed from the npm registry the first time (the only
network this needs); where the registry cannot be reached the test says so
and exits 77, which meson counts as skipped. Root is needed: the agent
prefix is bound over /usr/local in a private mount namespace, so the host's
/usr/local is never touched, and uid 65534 runs through setpriv.

usage: check_codex.py AASM_LAUNCH AGENT_DIR
       check_codex.py profile PROFILES_DIR   (offline: the profile is
         coding-agent-web plus exactly its grants)
AASMC and AASM_PROFILES in the environment name the build's compiler and
profiles for --profile.
"""
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import yaml

PACKAGE = '@openai/codex'
VERSION = '0.171.0'  # pinned: its linux binary comes as the optional dependency @openai/codex-linux-x64
MOCK_HOST, MOCK_PORT = '127.0.0.29', 443  # coding-agent-web allows tcp:443; an address of its own on loopback
NOBODY = 65534
SKIP = 77
CODEX = '/usr/local/bin/codex'  # where `npm install -g` links it; the agent prefix is bound there
PROMPT = 'touch the two files'
TOOL_CALLS = ['touch out/x', 'touch ../outside/x']

failures = []


def fail(message):
    failures.append(message)
    print('FAIL: ' + message, flush=True)


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


# --- the profile is coding-agent-web plus its grants, and nothing else -----

GRANTS = {('filesystem', 'read', 'allow'): ['${HOME}/.codex'],
          ('filesystem', 'write', 'allow'): ['${HOME}/.codex'],
          ('environment', 'pass'): ['OPENAI_API_KEY']}


def check_profile(profiles):
    web = yaml.safe_load(open(os.path.join(profiles, 'coding-agent-web.yaml')))['spec']
    codex = yaml.safe_load(open(os.path.join(profiles, 'coding-agent-codex.yaml')))['spec']
    for keys, added in GRANTS.items():
        node = codex
        for key in keys[:-1]:
            node = node[key]
        if node[keys[-1]][-len(added):] != added:
            fail(f'coding-agent-codex: {".".join(keys)} does not end with {added}')
        node[keys[-1]] = node[keys[-1]][:-len(added)]
    if codex != web:
        fail('coding-agent-codex differs from coding-agent-web by more than its grants '
             f'{sorted(".".join(k) for k in GRANTS)}: keep the two in step')
    else:
        print('coding-agent-codex is coding-agent-web plus ' + ', '.join(f'{".".join(k)} {v}' for k, v in GRANTS.items()))


# --- the agent, installed once into build/agent ------------------------------

def installed(agent):
    try:
        meta = json.load(open(os.path.join(agent, 'lib/node_modules', PACKAGE, 'package.json')))
    except OSError:
        return False
    return meta.get('version') == VERSION and os.path.exists(os.path.join(agent, 'bin/codex'))


def install(agent):
    """Installs PACKAGE@VERSION as `npm install -g --prefix` does, beside and
    renamed into place, so a broken install is never taken for one. False
    (said loudly) where the registry cannot be reached."""
    if installed(agent):
        return True
    if not shutil.which('npm'):
        print('SKIP: npm is not installed (./run deps installs nodejs and npm)', flush=True)
        return False
    try:
        ping = run(['npm', 'ping', '--fetch-retries=0', '--fetch-timeout=20000'], timeout=60)
        said = [l for l in (ping.stderr + ping.stdout).splitlines() if l.startswith(('npm notice PING', 'npm error code'))]
        why = '' if ping.returncode == 0 else '; '.join(said) or f'exit {ping.returncode}'
    except subprocess.TimeoutExpired:
        why = 'no answer in 60 s'
    if why:
        print(f'SKIP: the npm registry is unreachable (npm ping: {why}); '
              f'this test installs {PACKAGE}@{VERSION} from it once into {agent}', flush=True)
        return False
    staging = agent + '.installing'
    shutil.rmtree(staging, ignore_errors=True)
    env = dict(os.environ, npm_config_cache=staging + '-cache')
    got = run(['npm', 'install', '-g', '--prefix', staging, '--no-audit', '--no-fund', '--loglevel=error',
               f'{PACKAGE}@{VERSION}'], env=env, timeout=900)
    shutil.rmtree(staging + '-cache', ignore_errors=True)
    if got.returncode != 0:
        fail(f'npm install {PACKAGE}@{VERSION}: exit {got.returncode}: {got.stderr.strip()[-2000:]}')
        return False
    shutil.rmtree(agent, ignore_errors=True)
    os.rename(staging, agent)
    return installed(agent)


# --- a mock of the Responses API: one tool call per turn, then "done" --------

class Mock(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    outputs = {}  # call_id -> the tool output codex sent back

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get('Content-Length', 0))) or b'{}')
        done = [i for i in body.get('input', []) if i.get('type') == 'function_call_output']
        for item in done:
            Mock.outputs[item['call_id']] = item.get('output', '')
        n = len(done)
        if n < len(TOOL_CALLS):
            item = {'type': 'function_call', 'id': f'fc_{n}', 'call_id': f'call_{n}', 'name': 'exec_command',
                    'arguments': json.dumps({'cmd': TOOL_CALLS[n]})}
        else:
            item = {'type': 'message', 'id': 'msg_done', 'role': 'assistant',
                    'content': [{'type': 'output_text', 'text': 'done'}]}
        self.send_response(200)
        self.send_header('Content-Type', 'text/event-stream')
        self.send_header('Connection', 'close')
        self.end_headers()
        response = {'id': f'resp_{n}'}
        usage = {'input_tokens': 1, 'output_tokens': 1, 'total_tokens': 2}
        for event in ({'type': 'response.created', 'response': response},
                      {'type': 'response.output_item.done', 'item': item},
                      {'type': 'response.completed', 'response': dict(response, usage=usage)}):
            self.wfile.write(f'event: {event["type"]}\ndata: {json.dumps(event)}\n\n'.encode())
        self.close_connection = True

    def do_GET(self):  # model lists and the like: none here
        self.send_response(404)
        self.send_header('Content-Length', '0')
        self.end_headers()

    def log_message(self, *args):
        pass


CONFIG = f'''model = "mock-model"
model_provider = "mock"
[model_providers.mock]
name = "mock"
base_url = "http://{MOCK_HOST}:{MOCK_PORT}/v1"
wire_api = "responses"
'''


# --- one user's world and runs --------------------------------------------------

def in_agent_namespace(agent, uid, argv, env):
    """argv as `uid`, in a private mount namespace where the agent prefix is
    /usr/local (what `npm install -g` as root makes), HOME and the rest `env`."""
    drop = ['/usr/bin/setpriv', f'--reuid={uid}', f'--regid={uid}', '--clear-groups', '--'] if uid else []
    shell = 'mount --bind "$0" /usr/local && exec "$@"'
    return ['/usr/bin/unshare', '--mount', '--propagation', 'private', '/bin/sh', '-c', shell, agent] + drop + \
        ['/usr/bin/env', '-i'] + [f'{k}={v}' for k, v in env.items()] + argv


class World:
    def __init__(self, uid):
        self.uid = uid
        self.base = tempfile.mkdtemp(prefix='aasm-agent-', dir='/var/tmp')  # the view makes /tmp private
        os.chmod(self.base, 0o755)
        self.ws, self.outside, self.home = (os.path.join(self.base, d) for d in ('ws', 'outside', 'home'))
        self.reset()

    def reset(self):
        for d in (self.ws, self.outside, self.home):
            shutil.rmtree(d, ignore_errors=True)
        for d in (self.ws + '/out', self.outside, self.home + '/.codex'):
            os.makedirs(d)
        os.chmod(self.home + '/.codex', 0o700)
        with open(self.home + '/.codex/config.toml', 'w') as f:
            f.write(CONFIG)
        run(['chown', '-R', f'{self.uid}:{self.uid}', self.base], check=True)
        Mock.outputs = {}

    def env(self):
        return {'PATH': '/usr/local/bin:/usr/bin:/bin', 'HOME': self.home, 'LANG': 'C.UTF-8',
                'AASMC': os.environ['AASMC'], 'AASM_PROFILES': os.environ['AASM_PROFILES']}

    def run(self, agent, launch, codex_args, sandboxed):
        prefix = [launch, '--profile', 'coding-agent-codex', '--'] if sandboxed else []
        argv = in_agent_namespace(agent, self.uid, prefix + [CODEX] + codex_args, self.env())
        return run(argv, cwd=self.ws, timeout=180)


EXEC = ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', PROMPT]


def check_user(agent, launch, uid):
    who = 'root' if uid == 0 else f'uid {uid}'
    w = World(uid)
    try:
        version = w.run(agent, launch, ['--version'], True)
        if version.returncode != 0 or version.stdout.strip() != f'codex-cli {VERSION}':
            fail(f'{who}: codex --version under the sandbox: exit {version.returncode}, {version.stdout!r}: {version.stderr.strip()}')
        helped = w.run(agent, launch, ['--help'], True)
        if helped.returncode != 0 or 'exec' not in helped.stdout:
            fail(f'{who}: codex --help under the sandbox: exit {helped.returncode}: {helped.stderr.strip()}')
        if 'aasm-launch: profile coding-agent-codex: plan sha256:' not in version.stderr:
            fail(f'{who}: --profile did not name its plan: {version.stderr.strip()}')

        # The control: no sandbox, both tool calls write their file.
        bare = w.run(agent, launch, EXEC, False)
        outputs = dict(Mock.outputs)
        if bare.returncode != 0 or not os.path.exists(w.ws + '/out/x') or not os.path.exists(w.outside + '/x'):
            fail(f'{who}: the control (no sandbox) did not create both files: exit {bare.returncode}: '
                 f'{bare.stderr.strip()[-1500:]}')
        elif not all('exited with code 0' in outputs.get(f'call_{i}', '') for i in range(2)):
            fail(f'{who}: the control: a tool call did not exit 0: {outputs}')
        else:
            print(f'{who}: control: codex exec, no sandbox: out/x and ../outside/x created', flush=True)

        w.reset()
        confined = w.run(agent, launch, EXEC, True)
        outputs = dict(Mock.outputs)
        denied = outputs.get('call_1', '')
        if confined.returncode != 0:
            fail(f'{who}: codex exec under the sandbox: exit {confined.returncode}: {confined.stderr.strip()[-2000:]}')
        if not os.path.exists(w.ws + '/out/x') or 'exited with code 0' not in outputs.get('call_0', ''):
            fail(f'{who}: the allowed tool call (touch out/x) did not succeed: {outputs.get("call_0")!r}')
        if os.path.exists(w.outside + '/x') or 'exited with code 1' not in denied or \
                'No such file or directory' not in denied:
            fail(f'{who}: the denied tool call (touch ../outside/x) was not refused with ENOENT: {denied!r}')
        if not os.path.isdir(w.home + '/.codex/sessions'):
            fail(f'{who}: the agent did not write its sessions into the granted ~/.codex')
        if not failures:
            print(f'{who}: codex exec under --profile coding-agent-codex: touch out/x exit 0; '
                  f'touch ../outside/x: {denied.strip().splitlines()[-1]!r} (ENOENT)', flush=True)
    finally:
        shutil.rmtree(w.base, ignore_errors=True)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == 'profile':
        check_profile(sys.argv[2])
        return 1 if failures else 0
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    launch, agent = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if os.geteuid() != 0:
        print('SKIP: needs root (a private mount namespace binds the agent at /usr/local; uid 65534 through setpriv)')
        return SKIP
    if not install(agent):
        return 1 if failures else SKIP
    os.chmod(agent, 0o755)
    server = http.server.ThreadingHTTPServer((MOCK_HOST, MOCK_PORT), Mock)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for uid in (0, NOBODY):
            check_user(agent, launch, uid)
    finally:
        server.shutdown()
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
