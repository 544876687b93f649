#!/usr/bin/env python3
"""What an install ships, checked where it is installed (docs/install.md).

  check_install.py meson BUILD_DIR     meson install --destdir into a temporary root
  check_install.py deb PACKAGE.deb     dpkg -x the package into a temporary root
  check_install.py man BUILD_DIR       the built man pages (no install)
  check_install.py completions SCRIPT AASMC AASM_LAUNCH

meson and deb then check the same things, from the installed paths only:
exactly the expected files (the programs, the profiles, the schema, the man
pages, the completions; no test), the programs stripped, `aasm-launch doctor`,
the installed aasmc compiling an installed profile into a plan the installed
aasm-launch runs a real command under (an allowed read gives the file's bytes,
a write outside the profile's trees is refused; `--profile coding-agent`
finding the installed aasmc and profile beside the launcher), the man pages (every option
of --help in its page, every node of schemas/policy.schema.json in
aasm-policy(5), no groff warning) and the completions (every command
and option of --help, the installed profiles). man and completions are those
last two checks alone, on the build tree.

The temporary root is made under AASM_INSTALL_WORK (the build directory), not
/tmp: the profile gives the command a /tmp of its own, and the launch's
working directory is the root itself.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.environ.get('AASM_SOURCE_ROOT', os.path.join(os.path.dirname(__file__), '..', '..'))
MAN_PAGES = {'aasmc': 'man1/aasmc.1', 'aasm-launch': 'man1/aasm-launch.1',
             'aasm-policy': 'man5/aasm-policy.5', 'aasm-plan': 'man5/aasm-plan.5'}
failures = []


def fail(message):
    failures.append(message)
    print('FAIL: ' + message)


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def version():
    text = open(os.path.join(SOURCE, 'meson.build'), encoding='utf-8').read()
    return re.search(r"version\s*:\s*'([^']+)'", text).group(1)


# --help, parsed: {command: {option: [values]}} for aasmc (a command per usage
# line, continuation lines belonging to the one above; '' for `aasmc --version`)
# and aasm-launch ('' for the launch and --dry-run forms, 'doctor').
def help_options(program):
    text = run([program, '--help']).stdout
    name = os.path.basename(program)
    commands = {}
    command = None
    for line in text.split('\n'):
        if not line.strip():
            break  # the usage block ends at the first blank line
        words = line.replace('usage:', '').split()
        if words and words[0] == name:
            rest = words[1:]
            command = ''
            if name == 'aasmc' and rest and not rest[0].startswith('-'):
                command = rest[0] + (' ' + rest[1] if rest[0] == 'receipt' else '')
            elif name == 'aasm-launch' and rest and rest[0] == 'doctor':
                command = 'doctor'
            line = ' '.join(rest[len(command.split()):])
        options = commands.setdefault(command, {})
        for m in re.finditer(r'(?<![\w-])(--?[a-z][a-z0-9-]*)(?:[= ]([a-z0-9_]+(?:\|[a-z0-9_]+)+))?', line):
            options.setdefault(m.group(1), [])
            if m.group(2):
                options[m.group(1)] = m.group(2).split('|')
    return commands


def complete(script, words, path):
    """The words bash's completion offers for the command line `words` (the
    last one being completed), with COMP_WORDBREAKS' default '=' split."""
    split = []
    for word in words:
        if '=' in word and word.startswith('--'):
            option, value = word.split('=', 1)
            split += [option, '=', value]
        else:
            split.append(word)
    program = '_aasmc' if words[0] == 'aasmc' else '_aasm_launch'
    quoted = ' '.join("'" + w.replace("'", "'\\''") + "'" for w in split)
    shell = (f'source "$1"; compopt() {{ :; }}; COMP_WORDS=({quoted}); '
             f'COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); {program}; printf "%s\\n" "${{COMPREPLY[@]}}"')
    result = run(['bash', '-c', shell, 'bash', script], env=dict(os.environ, PATH=path))
    if result.returncode != 0:
        fail(f'completing {words}: bash exited {result.returncode}: {result.stderr.strip()}')
    return set(w for w in result.stdout.split('\n') if w)


def check_completions(script, aasmc, launch, profiles=None):
    path = os.path.dirname(aasmc) + os.pathsep + os.environ.get('PATH', '')
    for program in (aasmc, launch):
        name = os.path.basename(program)
        commands = help_options(program)
        if len(commands) < 2:
            fail(f'{name} --help: no usage lines found')
        first = complete(script, [name, ''], path) | complete(script, [name, '-'], path)
        for command, options in commands.items():
            if command:
                if command.split()[0] not in first:
                    fail(f'{name}: the completion does not offer the command {command.split()[0]}')
                if ' ' in command and command.split()[1] not in complete(script, [name, command.split()[0], ''], path):
                    fail(f'{name}: the completion does not offer {command}')
            before = [name] + command.split()
            offered = complete(script, before + ['-'], path)
            offered = {o.rstrip('=') for o in offered}
            for option, values in options.items():
                if command == '' and name == 'aasmc':
                    ok = option in first  # aasmc --version, --help
                else:
                    ok = option in offered
                if not ok:
                    fail(f'{name} {command}: --help lists {option}, the completion does not offer it')
                if values:
                    # As `--opt VALUE` and as `--opt=VALUE`: the completion knows which it is.
                    got = complete(script, before + [option, ''], path) | complete(script, before + [option + '='], path)
                    got = {g.split('=', 1)[-1] for g in got}
                    for value in values:
                        if value not in got:
                            fail(f'{name} {command} {option}: --help lists the value {value}, the completion does not')
    if profiles:
        offered = complete(script, ['aasmc', 'compile', ''], path)
        for profile in glob.glob(os.path.join(profiles, '*.yaml')):
            if os.path.realpath(profile) not in {os.path.realpath(o) for o in offered}:
                fail(f'aasmc compile: the completion does not offer the installed profile {profile}')
        names = complete(script, ['aasm-launch', '--profile', ''], path)
        for profile in glob.glob(os.path.join(profiles, '*.yaml')):
            if os.path.basename(profile)[:-len('.yaml')] not in names:
                fail(f'aasm-launch --profile: the completion does not offer the installed profile {profile}')
    # zsh runs the same script; where zsh is installed, it must at least load it.
    if shutil.which('zsh'):
        result = run(['zsh', '-c', 'autoload -Uz compinit bashcompinit && compinit -u && bashcompinit && source "$1" '
                      '&& COMP_WORDS=(aasmc compile -) COMP_CWORD=2 && _aasmc; print -l -- "${COMPREPLY[@]}"',
                      'zsh', script], env=dict(os.environ, PATH=path))
        if '--print-ir' not in result.stdout.split():
            fail(f'zsh: the completion did not run under bashcompinit: {result.stdout.strip()} {result.stderr.strip()}')


def man_text(page):
    """A page as man prints it, and groff's warnings."""
    result = run(['man', '--warnings', '-E', 'UTF-8', '-l', '-Tutf8', '-Z', page],
                 env=dict(os.environ, LC_ALL='C.UTF-8', MANROFFSEQ='', MANWIDTH='80'))
    if result.returncode != 0 or result.stderr.strip():
        fail(f'man {page}: {result.stderr.strip() or "exit " + str(result.returncode)}')
    text = run(['man', '-l', page], env=dict(os.environ, LC_ALL='C.UTF-8', MANWIDTH='200', MAN_KEEP_FORMATTING='')).stdout
    return re.sub(r'.\x08', '', text)


def schema_nodes():
    """Every key the policy schema defines, at any depth."""
    keys = set()

    def walk(node):
        if isinstance(node, dict):
            keys.update(node.get('properties', {}) if isinstance(node.get('properties'), dict) else {})
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    with open(os.path.join(SOURCE, 'schemas', 'policy.schema.json'), encoding='utf-8') as f:
        walk(json.load(f))
    return keys


def check_man(man_dir, aasmc, launch):
    for name, page in MAN_PAGES.items():
        path = os.path.join(man_dir, page)
        candidates = [path, path + '.gz']
        found = next((c for c in candidates if os.path.exists(c)), None)
        if not found:
            fail(f'no man page {page}')
            continue
        text = man_text(found)
        if not re.search(rf'^NAME\n\s+{re.escape(name)} - \S', text, re.M):
            fail(f'{page}: no NAME line "{name} - ..."')
        if name == 'aasm-policy':
            for key in sorted(schema_nodes()):
                if not re.search(rf'(?<![\w-]){re.escape(key)}(?![\w-])', text):
                    fail(f'{page}: the policy schema has the node {key}, the man page does not')
        for program in (aasmc, launch):
            if os.path.basename(program) != name:
                continue
            for command, options in help_options(program).items():
                for option in options:
                    if not re.search(rf'(?<![\w-]){re.escape(option)}(?![\w-])', text):
                        fail(f'{page}: --help lists {option}, the man page does not')


def elf_stripped(path):
    sections = run(['readelf', '-S', '-W', path]).stdout
    return '.symtab' not in sections and '.debug_' not in sections


def expected_files(prefix, is_deb):
    files = {f'{prefix}/bin/aasmc', f'{prefix}/bin/aasm-launch', f'{prefix}/share/aasm/schemas/policy.schema.json',
             f'{prefix}/share/bash-completion/completions/aasmc', f'{prefix}/share/bash-completion/completions/aasm-launch',
             f'{prefix}/share/zsh/vendor-completions/_aasm'}
    files |= {f'{prefix}/share/man/{page}' + ('.gz' if is_deb else '') for page in MAN_PAGES.values()}
    for path in glob.glob(os.path.join(SOURCE, 'profiles', '**', '*'), recursive=True):
        if os.path.isfile(path):
            files.add(f'{prefix}/share/aasm/' + os.path.relpath(path, SOURCE))
    if is_deb:
        files |= {'/usr/share/doc/aasm/copyright', '/usr/share/doc/aasm/changelog.gz',
                  '/usr/share/lintian/overrides/aasm'}
    return files


def check_installed(root, prefix, is_deb):
    installed = set()
    for top, dirs, names in os.walk(root):
        for name in names:
            installed.add('/' + os.path.relpath(os.path.join(top, name), root))
    expected = expected_files(prefix, is_deb)
    for path in sorted(installed - expected):
        fail(f'installs {path}, which is not part of an install')
    for path in sorted(expected - installed):
        fail(f'does not install {path}')

    bin_dir = root + prefix + '/bin'
    aasmc, launch = bin_dir + '/aasmc', bin_dir + '/aasm-launch'
    for program in (aasmc, launch):
        if not elf_stripped(program):
            fail(f'{program} is not stripped')
        out = run([program, '--version']).stdout.strip()
        if out != f'{os.path.basename(program)} {version()}':
            fail(f'{program} --version printed {out!r}')

    doctor = run([launch, 'doctor', '--json'])
    if doctor.returncode not in (0, 1):
        fail(f'aasm-launch doctor exited {doctor.returncode}: {doctor.stderr.strip()}')
    else:
        report = json.loads(doctor.stdout)
        if report.get('schema') != 'aasm.dev/doctor/v1':
            fail(f'aasm-launch doctor --json: schema {report.get("schema")!r}')
        print(f'doctor: exit {doctor.returncode}')
    if not run([launch, 'doctor']).stdout.strip():
        fail('aasm-launch doctor printed nothing')

    # The installed compiler, an installed profile, the installed launcher.
    share = root + prefix + '/share/aasm'
    plan = os.path.join(root, 'coding-agent.plan')
    compiled = run([aasmc, 'compile', share + '/profiles/coding-agent.yaml', '-o', plan])
    if compiled.returncode != 0:
        fail(f'installed aasmc could not compile the installed coding-agent profile: {compiled.stderr.strip()}')
        return
    schema = os.path.relpath(share + '/schemas/policy.schema.json', root)
    confined = run([launch, plan, '--', '/bin/cat', schema], cwd=root)
    if confined.returncode != 0 or confined.stdout != open(share + '/schemas/policy.schema.json').read():
        fail(f'cat {schema} under the plan: exit {confined.returncode}, {len(confined.stdout)} bytes: {confined.stderr.strip()}')
    else:
        print(f'confined cat {schema}: exit 0, {len(confined.stdout)} bytes, the file\'s')
    # --profile: the installed aasmc and profile, found beside the installed launcher.
    env = {k: v for k, v in os.environ.items() if k not in ('AASMC', 'AASM_PROFILES')}
    env['XDG_CACHE_HOME'] = os.path.join(root, 'cache')
    wrapped = run([launch, '--profile', 'coding-agent', '--', '/bin/cat', schema], cwd=root, env=env)
    if wrapped.returncode != 0 or 'aasm-launch: profile coding-agent: plan sha256:' not in wrapped.stderr:
        fail(f'--profile coding-agent -- cat {schema}: exit {wrapped.returncode}: {wrapped.stderr.strip()}')
    else:
        print(f'--profile coding-agent: {wrapped.stderr.strip()}')
    # Outside the workspace: the profile gives no write to /etc, so even root is refused.
    target = '/etc/aasm-install-test-' + str(os.getpid())
    refused = run([launch, plan, '--', '/usr/bin/touch', target], cwd=root)
    if refused.returncode == 0 or os.path.exists(target):
        fail(f'touch {target} under the plan was not refused (exit {refused.returncode})')
        if os.path.exists(target):
            os.unlink(target)
    else:
        print(f'confined touch {target}: refused, exit {refused.returncode}')

    check_man(root + prefix + '/share/man', aasmc, launch)
    check_completions(root + prefix + '/share/bash-completion/completions/aasmc', aasmc, launch,
                      profiles=share + '/profiles')


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ''
    if mode == 'completions' and len(sys.argv) == 5:
        check_completions(*sys.argv[2:5])
    elif mode == 'man' and len(sys.argv) == 3:
        build = os.path.abspath(sys.argv[2])
        man_dir = tempfile.mkdtemp()
        try:
            for page in MAN_PAGES.values():
                os.makedirs(os.path.join(man_dir, os.path.dirname(page)), exist_ok=True)
                shutil.copy(os.path.join(build, 'man', os.path.basename(page)), os.path.join(man_dir, page))
            check_man(man_dir, os.path.join(build, 'compiler', 'aasmc'), os.path.join(build, 'launcher', 'aasm-launch'))
        finally:
            shutil.rmtree(man_dir)
    elif mode in ('meson', 'deb') and len(sys.argv) == 3:
        work = os.environ.get('AASM_INSTALL_WORK') or os.path.dirname(os.path.abspath(sys.argv[2]))
        root = tempfile.mkdtemp(prefix='install-root.', dir=work)
        try:
            if mode == 'meson':
                options = json.loads(run(['meson', 'introspect', sys.argv[2], '--buildoptions']).stdout)
                prefix = next(o['value'] for o in options if o['name'] == 'prefix')
                # --strip: a build directory configured before strip=true was the
                # project's default installs what a fresh one does.
                result = run(['meson', 'install', '-C', sys.argv[2], '--no-rebuild', '--strip', '--quiet',
                              '--destdir', root])
            else:
                prefix = '/usr'
                result = run(['dpkg-deb', '-x', sys.argv[2], root])
            if result.returncode != 0:
                fail(f'{mode} install into {root}: {result.stdout.strip()} {result.stderr.strip()}')
            else:
                check_installed(root, prefix, mode == 'deb')
        finally:
            shutil.rmtree(root)
    else:
        sys.exit(__doc__)
    if failures:
        sys.exit(f'{len(failures)} failure(s)')
    print('ok')


if __name__ == '__main__':
    main()
