# bash completion for aasmc and aasm-launch (installed as both names).
# The commands and options are the ones each program's --help lists; the
# test completions (tests/install/check_completions.py) asks this script for
# them and fails on any --help has and it lacks. zsh uses this same script
# (completions/_aasm).

# The shipped profiles, beside the aasmc that would run: PREFIX/bin/aasmc
# reads PREFIX/share/aasm/profiles/*.yaml, wherever PREFIX is.
_aasm_profiles() {
  local bin dir profile
  bin=$(command -v aasmc 2>/dev/null) && [[ $bin == */* ]] || return 0
  dir=$(cd "${bin%/*}/../share/aasm/profiles" 2>/dev/null && pwd -P) || return 0
  for profile in "$dir"/*.yaml; do
    [[ -f $profile ]] && printf '%s\n' "$profile"
  done
  return 0
}

# Their names, for aasm-launch --profile NAME (a name, not a path).
_aasm_profile_names() {
  local IFS=$'\n' profile names=
  for profile in $(_aasm_profiles); do
    profile=${profile##*/}
    names+=" ${profile%.yaml}"
  done
  _aasm_words "$names"
}

# Adds the words of $1 that start with the current word to COMPREPLY.
_aasm_words() {
  local IFS=$' \t\n'
  COMPREPLY+=($(compgen -W "$1" -- "$cur"))
}

# compopt is bash's alone (zsh's bashcompinit has none), and a completion
# function must not fail for want of it.
_aasm_compopt() {
  type compopt >/dev/null 2>&1 && compopt "$@" 2>/dev/null
  return 0
}

_aasm_files() {
  local IFS=$'\n'
  COMPREPLY+=($(compgen -f -- "$cur"))
  _aasm_compopt -o filenames
}

# OPTION=VALUE: bash splits the word at '=' when COMP_WORDBREAKS has it (the
# default), else the value comes with the option and the reply must too.
# Completes VALUE from $2 when the current word is $1's value.
_aasm_equals_value() {
  local option=$1 words=$2 value
  if [[ $cur == = && $prev == "$option" ]]; then
    cur= _aasm_words "$words"
  elif [[ $prev == = && ${COMP_WORDS[COMP_CWORD - 2]} == "$option" ]]; then
    _aasm_words "$words"
  elif [[ $cur == "$option"=* ]]; then
    value=${cur#*=}
    local IFS=$' \t\n'
    COMPREPLY+=($(compgen -P "$option=" -W "$words" -- "$value"))
  else
    return 1
  fi
}

# A policy argument: the shipped profiles and any file.
_aasm_policies() {
  local IFS=$'\n' profile
  for profile in $(_aasm_profiles); do
    [[ $profile == "$cur"* ]] && COMPREPLY+=("$profile")
  done
  _aasm_files
}

# zsh runs these through bashcompinit: ksh emulation gives them bash's
# 0-based arrays and word splitting, for the functions they call too.
_aasmc() {
  [[ -n ${ZSH_VERSION-} ]] && emulate -L ksh
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  if ((COMP_CWORD == 1)); then
    _aasm_words "compile explain show digest verify diff suggest groups backends export import receipt --version --help"
    return
  fi
  local command=${COMP_WORDS[1]}
  [[ $command == receipt && $COMP_CWORD -ge 3 ]] && command="receipt ${COMP_WORDS[2]}"

  # An option's value.
  case $prev in
    --arch) _aasm_words "x86_64 aarch64 x86_64,aarch64"; return ;;
    --backend) _aasm_words "native bwrap systemd oci auto"; return ;;
    --format) _aasm_words "oci systemd"; return ;;
    --from) _aasm_words "srt oci"; return ;;
    --name) return ;;
    --diagnostics-format) _aasm_words "text json sarif"; return ;;
    -o | --localhost-profile) _aasm_files; return ;;
  esac
  _aasm_equals_value --diagnostics-format "text json sarif" && return

  local options
  case $command in
    compile) options="-o --arch --print-ir --backend --diagnostics-format=" ;;
    explain) options="--json --arch --diagnostics-format=" ;;
    show) options="--bpf --json --textconv" ;;
    verify) options="--arch --json --diagnostics-format=" ;;
    diff) options="--json --fail-on-widening" ;;
    groups | backends) options="--json" ;;
    export) options="--format -o --json --kubernetes --localhost-profile --arch --diagnostics-format=" ;;
    import) options="--from -o --name --json --arch --diagnostics-format=" ;;
    "receipt verify") options="--json" ;;
    receipt) _aasm_words "verify"; return ;;
    digest | suggest) options="" ;;
    *) return ;;
  esac
  if [[ $cur == -* ]]; then
    _aasm_words "$options"
    [[ ${COMPREPLY[*]} == *= ]] && _aasm_compopt -o nospace
    return
  fi
  case $command in
    compile | explain | verify | export | suggest) _aasm_policies ;;
    *) _aasm_files ;;
  esac
}

_aasm_launch() {
  [[ -n ${ZSH_VERSION-} ]] && emulate -L ksh
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} i
  COMPREPLY=()
  # After --: the command, then its arguments, as bash completes them.
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} == -- ]]; then
      if ((i == COMP_CWORD - 1)); then
        local IFS=$'\n'
        COMPREPLY=($(compgen -c -- "$cur"))
      else
        _aasm_files
      fi
      return
    fi
  done
  if [[ ${COMP_WORDS[1]} == doctor ]]; then
    if [[ $prev == --plan ]]; then
      _aasm_files
    else
      _aasm_words "--json --plan"
    fi
    return
  fi
  case $prev in
    --receipt | --receipt-key-file | --bwrap) _aasm_files; return ;;
    --backend) _aasm_words "native bwrap"; return ;;
    --profile) _aasm_profile_names; return ;;
    --receipt-fd | --expect-digest) return ;;
  esac
  _aasm_equals_value --denials "summary full off" && return
  if [[ $cur == -* ]]; then
    _aasm_words "--expect-digest --receipt --receipt-fd --receipt-key-file --explain --denials= --backend --bwrap --profile --dry-run --json -- --version --help"
    [[ ${COMPREPLY[*]} == *= ]] && _aasm_compopt -o nospace
    return
  fi
  ((COMP_CWORD == 1)) && _aasm_words "doctor"
  _aasm_files
}

complete -F _aasmc aasmc
complete -F _aasm_launch aasm-launch
