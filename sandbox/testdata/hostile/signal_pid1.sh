# Sends PID 1 (the sandbox's helper) every signal a process may send it,
# then says it is still there.
for s in QUIT ABRT SEGV BUS ILL TRAP SYS FPE USR1 USR2 ALRM VTALRM XCPU XFSZ PIPE PWR STKFLT TTIN TTOU TSTP WINCH IO PROF CONT URG KILL STOP; do
  kill -s "$s" 1 2>/dev/null
done
sleep 0.2
echo survived
