# Starts a background grandchild ($1 is its unique sleep argument) that
# detaches into its own session, then either exits ($2 = exit) or hangs.
setsid sleep "$1" >/dev/null 2>&1 < /dev/null &
sleep "$1" >/dev/null 2>&1 < /dev/null &
sleep 0.2
echo started
if [ "$2" = hang ]; then sleep 1000; fi
