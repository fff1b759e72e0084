# Reads the environment of PID 1 and of a host process; $1 is the host PID.
cat /proc/1/environ | tr '\0' '\n'
cat "/proc/$1/environ" | tr '\0' '\n'
