# dev/help.sh: sourced by every dev/ script right after its header comment: with -h or --help as
# the script's first argument, it prints that comment (what the script does, how to call it)
# and exits 0, before the script reads any other argument.
case ${1:-} in
    -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
