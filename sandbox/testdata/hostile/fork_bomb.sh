# The classic shell fork bomb, then a loop that keeps forking, so the
# script lives until the task bound or the deadline stops it.
b() { b | b & }
b
while :; do sleep 100 & done
