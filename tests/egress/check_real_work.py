#!/usr/bin/env python3
"""Real work through the egress broker (docs/egress.md, issue 27), as root
and as uid 65534:

- git clone over HTTP and over HTTPS (CONNECT; a certificate for localhost
  made here, trusted through GIT_SSL_CAINFO) from a repository this test
  serves on the host's loopback (dumb HTTP, `git update-server-info`), under
  a plan whose
  network.outbound.hosts lists only that server: the clone succeeds; under
  a plan listing another name it fails and the broker's denial names the
  host (offline: always runs);
- pip download of a wheel from a package index (PEP 503's simple API) this
  test serves over HTTPS on the host's loopback, with a venv's pip, under a
  plan listing only the index: it succeeds; listing another name, it fails
  with the denial (offline: always runs);
- npm install of a pinned package from registry.npmjs.org under a plan
  listing only the registry: it succeeds; under a plan listing another name
  it fails, and the denial names registry.npmjs.org. Where the registry
  cannot be reached from the host (tried directly, outside any sandbox), this
  half says so and the test exits 77, which meson counts as skipped, once
  the offline half has passed.

The client runs inside the sandbox with NO_PROXY dropped (env -u), so that
`localhost` goes through the broker too, as any other name would.

usage: check_real_work.py AASMC AASM_LAUNCH
"""
import functools
import http.server
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import zipfile

NOBODY = 65534
SKIP = 77
PACKAGE = 'is-number@7.0.0'
REGISTRY = 'registry.npmjs.org'

failures = []


def fail(message):
    failures.append(message)
    print('FAIL: ' + message, flush=True)


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def policy(hosts, work, readable=()):
    extra = ''.join(f', "{path}"' for path in readable)
    return f'''apiVersion: aasm.dev/v1
kind: Policy
metadata: {{name: egress-real-work, tier: agent}}
spec:
  filesystem:
    read: {{allow: ["/usr", "/etc", "/dev", "/proc", "{work}"{extra}]}}
    write: {{allow: ["{work}", "/dev/null"]}}
    execute: {{allow: ["/usr"{extra}]}}
  network:
    outbound:
      hosts: {hosts}
  environment:
    # A host whose egress re-signs TLS names its CA bundle so (node reads no system store).
    pass: ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "GIT_SSL_CAINFO"]
    set: {{HOME: "{work}", npm_config_cache: "{work}/.npm", npm_config_update_notifier: "false"}}
'''


def compile_plan(aasmc, work, name, hosts, readable=()):
    source = os.path.join(work, name + '.yaml')
    with open(source, 'w') as f:
        f.write(policy(hosts, work, readable))
    plan = os.path.join(work, name + '.bin')
    done = run([aasmc, 'compile', source, '-o', plan])
    if done.returncode:
        sys.exit('aasmc compile failed: ' + done.stderr)
    return plan


def under(launcher, plan, uid, command, cwd, env=None):
    prefix = [] if uid == 0 else ['/usr/bin/setpriv', f'--reuid={uid}', f'--regid={uid}', '--clear-groups', '--']
    return run(prefix + [launcher, plan, '--', '/usr/bin/env', '-u', 'no_proxy', '-u', 'NO_PROXY'] + command, cwd=cwd,
               env=env)


def certificate(root):
    """A self-signed certificate for localhost, and its key."""
    cert, key = os.path.join(root, 'cert.pem'), os.path.join(root, 'key.pem')
    run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
         '-addext', 'subjectAltName=DNS:localhost', '-keyout', key, '-out', cert], check=True)
    os.chmod(cert, 0o644)
    return cert, key


def serve_directory(directory, tls=None):
    """`directory` served on 127.0.0.1 (a free port), over HTTPS with `tls`
    (certificate, key), quietly, until shutdown()."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=directory))
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def serve_repository(root, tls=None):
    """A bare repository served by dumb HTTP on 127.0.0.1 (a free port)."""
    source = os.path.join(root, 'source')
    os.makedirs(source)
    git = ['git', '-c', 'user.name=t', '-c', 'user.email=t@localhost', '-c', 'init.defaultBranch=main']
    run(git + ['init', '-q', source], check=True)
    with open(os.path.join(source, 'README'), 'w') as f:
        f.write('served through the broker\n')
    run(git + ['-C', source, 'add', 'README'], check=True)
    run(git + ['-C', source, 'commit', '-q', '-m', 'one'], check=True)
    bare = os.path.join(root, 'served', 'repo.git')
    run(['git', 'clone', '-q', '--bare', source, bare], check=True)
    run(['git', '-C', bare, 'update-server-info'], check=True)
    return serve_directory(os.path.join(root, 'served'), tls)


def git_clone(aasmc, launcher, uid, scheme, proxy=None):
    """git clone through the broker: by the proxy variables, or by `proxy` (socks5h://) in git's own setting."""
    with tempfile.TemporaryDirectory(prefix='aasm-egress-git-') as root:
        os.chmod(root, 0o755)
        work = os.path.join(root, 'work')
        os.makedirs(work)
        tls = certificate(work) if scheme == 'https' else None  # where the command may read it
        os.chown(work, uid, uid)
        server = serve_repository(root, tls)
        port = server.server_address[1]
        url = f'{scheme}://localhost:{port}/repo.git'
        listed = compile_plan(aasmc, work, 'listed', f'["localhost:{port}"]')
        other = compile_plan(aasmc, work, 'other', '["git.example.org"]')
        env = dict(os.environ, GIT_SSL_CAINFO=tls[0]) if tls else None
        git = ['/usr/bin/git'] + (['-c', f'http.proxy={proxy}'] if proxy else [])
        via = f'through the broker by {proxy}' if proxy else 'through the broker'
        done = under(launcher, listed, uid, git + ['clone', '-q', url, 'clone'], work, env)
        readme = os.path.join(work, 'clone', 'README')
        if done.returncode or not os.path.exists(readme):
            fail(f'uid {uid}: git clone {url} {via}: exit {done.returncode}: {done.stderr.strip()}')
        elif 'network_hosts (brokered): allowed localhost:' not in done.stderr:
            fail(f'uid {uid}: git clone: no broker event for localhost: {done.stderr.strip()}')
        else:
            print(f'ok: uid {uid}: git clone {url} {via}', flush=True)
        done = under(launcher, other, uid, git + ['clone', '-q', url, 'clone2'], work, env)
        if done.returncode == 0 or f'broker refused localhost:{port} -> HTTP 403' not in done.stderr:
            fail(f'uid {uid}: git clone with localhost not listed: exit {done.returncode}: {done.stderr.strip()}')
        else:
            print(f'ok: uid {uid}: git clone {via} refused, the denial names localhost:{port}', flush=True)
        server.shutdown()


def wheel(directory):
    """A minimal pure-Python wheel, aasm_probe_pkg 1.0, and its file name."""
    name = 'aasm_probe_pkg-1.0-py3-none-any.whl'
    files = {'aasm_probe_pkg/__init__.py': 'VALUE = 1\n',
             'aasm_probe_pkg-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: aasm-probe-pkg\nVersion: 1.0\n',
             'aasm_probe_pkg-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\nGenerator: aasm-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n'}
    record = ''.join(f'{path},,\n' for path in files) + 'aasm_probe_pkg-1.0.dist-info/RECORD,,\n'
    with zipfile.ZipFile(os.path.join(directory, name), 'w') as z:
        for path, text in files.items():
            z.writestr(path, text)
        z.writestr('aasm_probe_pkg-1.0.dist-info/RECORD', record)
    return name


def pip_download(aasmc, launcher, uid, venv):
    with tempfile.TemporaryDirectory(prefix='aasm-egress-pip-') as root:
        os.chmod(root, 0o755)
        work = os.path.join(root, 'work')
        os.makedirs(work)
        tls = certificate(work)
        os.chown(work, uid, uid)
        project = os.path.join(root, 'served', 'simple', 'aasm-probe-pkg')
        os.makedirs(project)
        name = wheel(project)
        with open(os.path.join(project, 'index.html'), 'w') as f:
            f.write(f'<!DOCTYPE html><html><body><a href="{name}">{name}</a></body></html>\n')
        server = serve_directory(os.path.join(root, 'served'), tls)
        port = server.server_address[1]
        listed = compile_plan(aasmc, work, 'listed', f'["localhost:{port}"]', [venv])
        other = compile_plan(aasmc, work, 'other', '["pypi.example.org"]', [venv])
        pip = [os.path.join(venv, 'bin', 'pip'), 'download', '--no-cache-dir', '--disable-pip-version-check',
               '--index-url', f'https://localhost:{port}/simple/', '--cert', tls[0], '-d', os.path.join(work, 'got'),
               'aasm-probe-pkg']
        done = under(launcher, listed, uid, pip, work)
        if done.returncode or not os.path.exists(os.path.join(work, 'got', name)):
            fail(f'uid {uid}: pip download through the broker: exit {done.returncode}: {done.stderr.strip()[-2000:]}')
        else:
            print(f'ok: uid {uid}: pip download {name} from https://localhost:{port}/simple/ through the broker', flush=True)
        done = under(launcher, other, uid, pip + ['--retries', '0'], work)
        if done.returncode == 0 or f'broker refused localhost:{port} -> HTTP 403' not in done.stderr:
            fail(f'uid {uid}: pip download with the index not listed: exit {done.returncode}: {done.stderr.strip()[-2000:]}')
        else:
            print(f'ok: uid {uid}: pip download refused, the denial names localhost:{port}', flush=True)
        server.shutdown()


def registry_reachable():
    try:
        socket.create_connection((REGISTRY, 443), timeout=10).close()
        return True
    except OSError as e:
        print(f'SKIP: npm half: {REGISTRY}:443 cannot be reached from this host ({e})', flush=True)
        return False


def npm_install(aasmc, launcher, uid):
    with tempfile.TemporaryDirectory(prefix='aasm-egress-npm-') as root:
        os.chmod(root, 0o755)
        work = os.path.join(root, 'work')
        os.makedirs(work)
        os.chown(work, uid, uid)
        listed = compile_plan(aasmc, work, 'listed', f'["{REGISTRY}"]')
        other = compile_plan(aasmc, work, 'other', '["registry.example.org"]')
        npm = ['/usr/bin/npm', 'install', '--no-audit', '--no-fund', '--prefix', work, PACKAGE]
        done = under(launcher, listed, uid, npm, work)
        if done.returncode or not os.path.isdir(os.path.join(work, 'node_modules', 'is-number')):
            fail(f'uid {uid}: npm install {PACKAGE} through the broker: exit {done.returncode}: {done.stderr.strip()[-2000:]}')
        else:
            print(f'ok: uid {uid}: npm install {PACKAGE} from {REGISTRY} through the broker', flush=True)
        shutil.rmtree(os.path.join(work, '.npm'), ignore_errors=True)
        done = under(launcher, other, uid, npm + ['--fetch-retries=0'], work)
        if done.returncode == 0 or f'broker refused {REGISTRY}:443 -> HTTP 403' not in done.stderr:
            fail(f'uid {uid}: npm install with the registry not listed: exit {done.returncode}: {done.stderr.strip()[-2000:]}')
        else:
            print(f'ok: uid {uid}: npm install refused, the denial names {REGISTRY}:443', flush=True)


def main():
    aasmc, launcher = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if os.geteuid() != 0:
        sys.exit('check_real_work.py runs as root (it also runs the clients as uid 65534)')
    for uid in (0, NOBODY):
        for scheme in ('http', 'https'):
            git_clone(aasmc, launcher, uid, scheme)
        git_clone(aasmc, launcher, uid, 'https', proxy='socks5h://127.0.0.1:3128')
    with tempfile.TemporaryDirectory(prefix='aasm-egress-venv-') as scratch:
        os.chmod(scratch, 0o755)
        venv = os.path.join(scratch, 'venv')
        made = run(['/usr/bin/python3', '-m', 'venv', venv])  # the system's python, which the sandbox can run
        if made.returncode:
            fail('python3 -m venv: ' + made.stderr.strip())
        else:
            for uid in (0, NOBODY):
                pip_download(aasmc, launcher, uid, venv)
    online = registry_reachable()
    if online:
        for uid in (0, NOBODY):
            npm_install(aasmc, launcher, uid)
    if failures:
        sys.exit(f'{len(failures)} failures')
    sys.exit(0 if online else SKIP)


if __name__ == '__main__':
    main()
