# bash completion for stackup                                -*- shell-script -*-
#
# Installed as share/bash-completion/completions/stackup, where bash-completion
# loads it on demand for the /usr/local and /usr prefixes (XDG_DATA_DIRS); for
# another prefix, or without bash-completion, `source` it from ~/.bashrc.
# Self-contained: needs none of bash-completion's helpers.
# tests/check_completion.py checks it against `stackup --help` and drives it.

# Options of every command (they may stand before or after the command).
_stackup_global_opts='--venv --state-dir --uv --http-timeout --cache-dir --no-cache --refresh
    --json --log-file --snapshot-strategy -v --verbose -q --quiet -h --help --version'

# COMPREPLY += one line of "$@"'s output per entry (names with spaces stay whole).
_stackup_add_lines() {
    local line
    while IFS= read -r line; do
        [[ -n $line ]] && COMPREPLY+=("$line")
    done < <("$@")
}

# Files ending in one of the given extensions, plus directories to walk into.
_stackup_files() {
    local cur=$1 ext
    shift
    compopt -o filenames 2>/dev/null
    for ext in "$@"; do
        _stackup_add_lines compgen -f -X "!*.$ext" -- "$cur"
    done
    _stackup_add_lines compgen -d -- "$cur"
}

# A path word as the shell will see it: a leading ~ expanded.
_stackup_expand() {
    local path=$1
    [[ $path == "~" || $path == "~/"* ]] && path=$HOME${path:1}
    printf '%s\n' "$path"
}

# Snapshot ids (a generation is a snapshot; rollback --to also takes its number,
# from `stackup history`): the directory names under <state>/<venv>-<hash>/snapshots/ that
# hold a snapshot.json. <state> is --state-dir or STACKUP_STATE_DIR, else the
# .stackup/ beside --venv; with only a manifest on the line, `stackup snapshots
# list MANIFEST` (it reads snapshot metadata, nothing else). Otherwise: none.
_stackup_snapshot_ids() {
    local cur=$1 state_dir=$2 venv=$3 manifest=$4 cmd=$5
    local root="" pattern="*" info id
    local -a ids=()
    if [[ -n $state_dir ]]; then
        root=$(_stackup_expand "$state_dir")
    elif [[ -n ${STACKUP_STATE_DIR:-} ]]; then
        root=$STACKUP_STATE_DIR
    fi
    if [[ -n $venv ]]; then
        venv=$(_stackup_expand "$venv")
        # stackup keys the state by the venv with symlinks resolved
        [[ -e $venv ]] && venv=$(realpath -- "$venv" 2>/dev/null || printf '%s\n' "$venv")
        venv=${venv%/}
        pattern="${venv##*/}-*"
        if [[ -z $root ]]; then
            local parent=.
            [[ $venv == */* ]] && parent=${venv%/*}
            root=$parent/.stackup  # /venv: /.stackup
        fi
    fi
    if [[ -n $root ]]; then
        for info in "$root"/$pattern/snapshots/*/snapshot.json; do
            [[ -e $info ]] || continue
            id=${info%/snapshot.json}
            ids+=("${id##*/}")
        done
    elif [[ -n $manifest && -f $(_stackup_expand "$manifest") ]]; then
        manifest=$(_stackup_expand "$manifest")
        while read -r id _; do
            [[ $id == [0-9]*T[0-9]*Z-* ]] && ids+=("$id")
        done < <("$cmd" snapshots list "$manifest" 2>/dev/null)
    fi
    ((${#ids[@]})) && _stackup_add_lines compgen -W "${ids[*]}" -- "$cur"
}

_stackup_complete_func() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()

    # `--opt=value`: bash splits it at '=' (COMP_WORDBREAKS) or not; take both.
    if [[ $cur == "=" && $prev == --* ]]; then
        cur=""
    elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    elif [[ $cur == --*=* ]]; then
        prev=${cur%%=*}
        cur=${cur#*=}
    fi

    # What the line already says: the command, the snapshots command and the
    # positionals before the cursor; --state-dir, --venv and a manifest anywhere.
    local cmd="" sub="" state_dir="" venv="" manifest="" word value i npos=0
    for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
        ((i == COMP_CWORD)) && continue
        word=${COMP_WORDS[i]}
        value=""
        if [[ $word == --*=* ]]; then
            value=${word#*=}
            word=${word%%=*}
        elif [[ $word == --* && ${COMP_WORDS[i + 1]:-} == "=" ]]; then
            # --opt=value split at '=' by COMP_WORDBREAKS
            ((i + 2 == COMP_CWORD)) || value=${COMP_WORDS[i + 2]:-}
            ((i += 2))
        else
            case $word in
                # options that take a value: their next word is not a positional
                --venv | --state-dir | --uv | --http-timeout | --cache-dir | --log-file | --snapshot-strategy | \
                    --out | --to | --label | --keep | --target-cuda)
                    ((i + 1 == COMP_CWORD)) || value=${COMP_WORDS[i + 1]:-}
                    ((i++))
                    ;;
            esac
        fi
        case $word in
            --state-dir) state_dir=$value ;;
            --venv) venv=$value ;;
        esac
        [[ $word == -* || $word == "=" ]] && continue
        [[ $word == *.yaml || $word == *.yml ]] && manifest=$word
        ((i > COMP_CWORD)) && continue
        if [[ -z $cmd ]]; then
            cmd=$word
        elif [[ $cmd == snapshots && -z $sub ]]; then
            sub=$word
        else
            ((npos++))
        fi
    done

    case $prev in
        --venv | --state-dir | --cache-dir)
            compopt -o filenames 2>/dev/null
            _stackup_add_lines compgen -d -- "$cur"
            return 0
            ;;
        --uv | --log-file | --out)
            compopt -o filenames 2>/dev/null
            _stackup_add_lines compgen -f -- "$cur"
            return 0
            ;;
        --snapshot-strategy)
            _stackup_add_lines compgen -W "automatic reflink hardlink copy" -- "$cur"
            return 0
            ;;
        --to)
            _stackup_snapshot_ids "$cur" "$state_dir" "$venv" "$manifest" "${COMP_WORDS[0]}"
            return 0
            ;;
        --http-timeout | --label | --keep | --wait-running)
            return 0  # a number or free text: nothing to offer
            ;;
        --target-cuda)
            _stackup_add_lines compgen -W "12.8 12.9 13.0" -- "$cur"
            return 0
            ;;
        --arch)
            _stackup_add_lines compgen -W "7.5 8.0 8.6 8.9 9.0 10.0 10.3 12.0 12.1" -- "$cur"
            return 0
            ;;
    esac

    local cmd_opts=""
    case $cmd/$sub in
        plan/) cmd_opts="--out" ;;
        apply/) cmd_opts="--dry-run --stage --switch-running --wait-running" ;;
        switch/) cmd_opts="--switch-running --wait-running" ;;
        rollback/) cmd_opts="--to --switch-running --wait-running" ;;
        inspect/) cmd_opts="--arch" ;;
        init/) cmd_opts="--out --force --target-cuda" ;;
        snapshots/create) cmd_opts="--label" ;;
        snapshots/prune) cmd_opts="--keep" ;;
    esac
    if [[ $cur == -* ]]; then
        _stackup_add_lines compgen -W "$_stackup_global_opts $cmd_opts" -- "$cur"
        return 0
    fi

    case $cmd/$sub in
        /)
            _stackup_add_lines compgen -W "plan apply switch verify inspect rollback history init snapshots status" -- "$cur"
            ;;
        snapshots/)
            _stackup_add_lines compgen -W "create list show delete prune" -- "$cur"
            ;;
        apply/)
            ((npos == 0)) && _stackup_files "$cur" yaml yml json  # MANIFEST or a saved PLAN
            ;;
        plan/ | verify/ | inspect/ | switch/ | rollback/ | history/ | status/ | snapshots/create | snapshots/list | \
            snapshots/prune)
            ((npos == 0)) && _stackup_files "$cur" yaml yml
            ;;
        snapshots/show | snapshots/delete)
            if ((npos == 0)); then
                _stackup_snapshot_ids "$cur" "$state_dir" "$venv" "$manifest" "${COMP_WORDS[0]}"
            elif ((npos == 1)); then
                _stackup_files "$cur" yaml yml
            fi
            ;;
    esac
    return 0
}

complete -F _stackup_complete_func stackup
