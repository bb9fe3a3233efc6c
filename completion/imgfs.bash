# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Bash completion for mkfs.img, fsck.img and dump.img (installed once per
# program name, for bash-completion's on-demand loading).
#
# The options come from the program's own --help, read when a completion
# first needs them (once per program and mode: mkfs.img --oci and
# fsck.img --oci=DIR have options of their own), so they are those of the
# installed version. Option values: the choices --help writes as
# =a|b|c, a few lists below (tests/completion/options.sh checks them
# against --help), and files or directories for the arguments --help
# names as such.

declare -gA _imgfs_help_cache

# _imgfs_opts CMD MODE: "OPTION ARG" per line; ARG is "=SPEC", "[=SPEC]"
# (optional value), " NAME" (a short option's separate argument) or empty.
_imgfs_opts() {
	local key="$1 $2" help
	if [ -z "${_imgfs_help_cache[$key]+set}" ]; then
		case $2 in
		oci) help=$("$1" --oci --help 2>/dev/null) ||
			help=$("$1" --oci=. --help 2>/dev/null) ;;
		*) help=$("$1" --help 2>/dev/null) ;;
		esac
		_imgfs_help_cache[$key]=$(_imgfs_parse "$help")
	fi
	printf '%s\n' "${_imgfs_help_cache[$key]}"
}

# _imgfs_parse HELP: short options at the start of an option line, long
# ones wherever --help names them (usage lines, "same as --x"); a value
# written there ("--x=ignore") is an example, not the option's argument:
# only placeholders (upper case) and choices (a|b) count.
_imgfs_parse() {
	local line rest opt arg
	local re_opt='^(--?[A-Za-z0-9][-A-Za-z0-9]*)(\[=[^] ,)]*\]|=[^] ,)]*)?(.*)$'
	local re_arg='^ ([A-Z][A-Z_]*)'
	local re_long='(^|[][ (,"'"'"'])(--[A-Za-z0-9][-A-Za-z0-9]*)(\[=[^] ,)]*\]|=[^] ,)]*)?(.*)$'
	while IFS= read -r line; do
		rest=$line
		if [[ $line =~ ^[[:space:]]+- ]]; then
			# an option line: "-q, --quiet", "-z ALG[,LEVEL]", ...
			rest=${line#"${line%%[![:space:]]*}"}
			while [[ $rest =~ $re_opt ]]; do
				opt=${BASH_REMATCH[1]} arg=${BASH_REMATCH[2]}
				rest=${BASH_REMATCH[3]}
				if [ -z "$arg" ] && [[ $opt != --* ]] &&
					[[ $rest =~ $re_arg ]]; then
					arg=" ${BASH_REMATCH[1]}"
					rest=${rest#"$arg"}
				fi
				printf '1 %s%s\n' "$opt" "$arg"
				[[ $rest == ", "* ]] || break
				rest=${rest#, }
			done
		fi
		while [[ $rest =~ $re_long ]]; do
			opt=${BASH_REMATCH[2]} arg=${BASH_REMATCH[3]}
			rest=${BASH_REMATCH[4]}
			[[ $arg =~ [A-Z|] ]] || arg=
			printf '2 %s%s\n' "$opt" "$arg"
		done
	done <<<"$1" | awk '{
		# the argument an option line gives wins over one met elsewhere
		n = substr($0, 3)
		if (match(n, /[= []/)) n = substr(n, 1, RSTART - 1)
		a = substr($0, 3 + length(n))
		if (!(n in s)) { o[++k] = n; s[n] = a; p[n] = $1 }
		else if (a != "" && (s[n] == "" || p[n] > $1)) { s[n] = a; p[n] = $1 }
	} END { for (i = 1; i <= k; i++) print o[i] s[o[i]] }'
}

# _imgfs_choices PROG OPTION: the values of options whose --help text
# lists them in prose rather than as =a|b|c.
_imgfs_choices() {
	case $1:$2 in
	mkfs.img:-b) echo "512 1024 2048 4096" ;;
	mkfs.img:-z) echo "lz4 lz4hc lzma deflate zstd" ;;
	mkfs.img:--layer-media-type)
		echo "application/vnd.erofs.layer.v1" \
			"application/vnd.erofs.layer.v1+zstd application/vnd.erofs" ;;
	esac
}

# _imgfs_values PROG SPEC OPTION CUR: fill COMPREPLY with OPTION's values
# (SPEC as _imgfs_opts gives it) that start with CUR.
_imgfs_values() {
	local prog=$1 spec=$2 opt=$3 cur=$4 name choices
	name=${spec#[}
	name=${name#=}
	name=${name# }
	name=${name%]}
	choices=$(_imgfs_choices "$prog" "$opt")
	if [ -z "$choices" ] && [[ $name == *"|"* ]]; then
		choices=${name//|/ }
	fi
	if [ -n "$choices" ]; then
		mapfile -t COMPREPLY < <(compgen -W "$choices" -- "$cur")
		return
	fi
	case $name in
	DIR | *LAYOUT)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
	FILE | TAR | IMAGE | SOURCE)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	*) COMPREPLY=() ;;
	esac
}

_imgfs() {
	local prog=${1##*/} line toks cur prev mode='' opts o spec
	line=${COMP_LINE:0:COMP_POINT}
	read -ra toks <<<"$line"
	if [[ $line =~ [[:space:]]$ ]] || [ ${#toks[@]} -le 1 ]; then
		cur=''
		[ ${#toks[@]} -le 1 ] && [[ ! $line =~ [[:space:]]$ ]] && return
		prev=${toks[${#toks[@]} - 1]}
	else
		cur=${toks[${#toks[@]} - 1]}
		prev=${toks[${#toks[@]} - 2]}
	fi
	for o in "${toks[@]:1}"; do
		case $prog:$o in
		mkfs.img:--oci | fsck.img:--oci=*) mode=oci ;;
		esac
	done
	opts=$(_imgfs_opts "$1" "$mode")
	# mkfs.img --oci also takes every option of a single conversion
	[ "$prog:$mode" = mkfs.img:oci ] && opts+=$'\n'$(_imgfs_opts "$1" '')

	# --option=VALUE
	if [[ $cur == --*=* ]]; then
		o=${cur%%=*}
		spec=$(grep -m1 -E -- "^$o\\[?=" <<<"$opts") || return
		_imgfs_values "$prog" "${spec#"$o"}" "$o" "${cur#*=}"
		# bash replaces only the part after '=' when '=' breaks words
		if [[ $COMP_WORDBREAKS != *=* ]]; then
			COMPREPLY=("${COMPREPLY[@]/#/$o=}")
		fi
		return
	fi
	# -z ALG: a short option's argument
	if [[ $prev == -[A-Za-z] ]] &&
		spec=$(grep -m1 -E -- "^$prev " <<<"$opts"); then
		_imgfs_values "$prog" "${spec#"$prev"}" "$prev" "$cur"
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(sed -E \
			-e 's/^(--[^= []*)=.*/\1=/' -e t -e 's/^([^= []*).*/\1/' \
			<<<"$opts" | sort -u)" -- "$cur")
		[ ${#COMPREPLY[@]} -eq 1 ] && [[ ${COMPREPLY[0]} == *= ]] &&
			compopt -o nospace 2>/dev/null
		return
	fi
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -F _imgfs mkfs.img fsck.img dump.img
