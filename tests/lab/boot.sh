# Sourced by the lab scripts: `lab_run LOG COMMAND` runs COMMAND in the Soft-RoCE lab
# (`lab.sh run`, its console in LOG) and returns the command's exit code.
#
# Under software emulation the guest kernel now and then hangs before its init runs (a CI
# run's console stopped at "booting" until the 900 s limit). A guest that has not reached
# its command within LAB_BOOT_DEADLINE seconds (default 180; a boot takes about 4 s alone,
# 70 s beside three other guests on two cores) has run nothing yet: it is stopped and
# booted again, three boots at most. A command that started is never run twice: its
# failures are the test's.
# Needs: $lab (path to lab.sh). LAB_SHARES, LAB_CWD, LAB_TIMEOUT, LAB_RDMA pass through.
lab_run() {
  local log=$1 cmd=$2 deadline=${LAB_BOOT_DEADLINE:-180} boot pid waited rc
  for boot in 1 2 3; do
    # Its own session, so that a stop reaches everything it started: `timeout` moves qemu
    # into a process group of its own, out of reach of a signal to lab.sh's group.
    setsid bash "$lab" run "$cmd" > "$log" 2>&1 &
    pid=$!
    waited=0
    while ! grep -q "lab-guest: running command" "$log" && kill -0 "$pid" 2>/dev/null; do
      if [ "$waited" -ge "$deadline" ]; then
        echo "lab: the guest did not reach its command within ${deadline}s (boot $boot of 3); stopping it" >&2
        pkill -TERM -s "$pid" || true
        wait "$pid" 2>/dev/null || true
        # lab.sh removes its run folder only when the guest ends by itself.
        rm -rf "$(sed -n 's/.*, run dir \(.*\)$/\1/p' "$log")"
        continue 2
      fi
      sleep 1
      waited=$((waited + 1))
    done
    rc=0
    wait "$pid" || rc=$?
    return "$rc"
  done
  echo "lab: the guest did not boot in 3 tries" >&2
  return 125
}
