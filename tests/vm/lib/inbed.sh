# SPDX-License-Identifier: GPL-2.0
# The helpers of the tests' in-bed scripts (busybox sh), put at the head of each script by its test:
#   die MSG         a T_ERROR line for the host, exit 1
#   send NAME FILE  FILE through the serial console (T_FILE NAME SIZE MD5, gzip | base64,
#                   T_FILE_END NAME), so that the host can tell a damaged copy; T_NOFILE NAME
#                   when FILE is missing
#   /tmp/run.sh TAG CMD...  runs CMD with stdout in /tmp/TAG.out, stderr in /tmp/TAG.err and its
#                   exit status in /tmp/TAG.rc (and as its own): nested as the COMMAND of a
#                   vmexit, it keeps each program's outputs apart.
die() { echo "T_ERROR $*"; exit 1; }
send() {
	[ -f "$2" ] || { echo "T_NOFILE $1"; return; }
	echo "T_FILE $1 $(wc -c <"$2") $(md5sum "$2" | cut -d' ' -f1)"
	gzip -c "$2" | base64
	echo "T_FILE_END $1"
}
cat >/tmp/run.sh <<'R'
tag=$1; shift
"$@" >/tmp/$tag.out 2>/tmp/$tag.err
rc=$?
echo $rc >/tmp/$tag.rc
exit $rc
R
# busy_start: a VM that keeps exiting, for the kvm_exit fast path's start-up check to judge real
# exits (src/kernel/hooks.c); its pid in BUSY. Its VMM sleeps 2 ms per IO exit: a VM that never
# stops exiting slows Bochs' clock to a crawl (1 s of bed time took ~6 min of host time), this
# one still gives the check its 100 exits in a few ms of bed time. busy_stop: ends it.
# /tmp/quiet.sh PID CMD...: the traced command of such a check: stops the busy VM PID, waits
# until it is gone, turns tracing on and runs CMD, so that tracefs counts only CMD's exits.
busy_start() {
	/vmexit-guest --vcpus 1 --cpuid 20 --io 5 --io-sleep-us 2000 --seconds 1800 --name busy >/dev/null 2>&1 &
	BUSY=$!
	sleep 1
}
busy_stop() {
	kill $BUSY 2>/dev/null
	wait $BUSY
}
cat >/tmp/quiet.sh <<'Q'
kill $1
while [ -d /proc/$1/task ] && ! grep -q '^State:.*Z' /proc/$1/status; do
	sleep 0.02
done
echo 1 >/sys/kernel/tracing/tracing_on
shift
exec "$@"
Q
