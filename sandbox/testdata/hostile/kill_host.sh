# Sends SIGKILL to a host process; $1 is its PID.
kill -9 "$1" && echo killed
