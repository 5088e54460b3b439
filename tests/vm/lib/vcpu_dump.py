#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where each vCPU of a hung bed is: asks QEMU's human monitor (bed_monitor.sh) for every
vCPU's registers, names RIP with the bed kernel's symbols, and names the kernel text addresses
found in the top of each vCPU's stack (a scan, not an unwind: stale return addresses show up
too, so read the list as candidates, newest first).

    vcpu_dump.py SOCKET [KALLSYMS]

KALLSYMS is /proc/kallsyms of the same kernel booted without KASLR (bed_monitor.sh makes and
caches it); without it the addresses stay raw. Prints to stdout; exit 0 when the monitor
answered, 2 when it did not (QEMU's main loop itself is stuck then, not the guest).
"""
import bisect
import re
import socket
import sys
import time

PROMPT = b"(qemu) "
STACK_WORDS = 96
PT_REGS_IP = 16		# struct pt_regs: 15 registers and orig_ax before ip (x86-64)


class Monitor:
    def __init__(self, path, timeout):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.read_prompt()

    def read_prompt(self):
        buf = b""
        while not buf.endswith(PROMPT):
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("monitor closed")
            buf += chunk
        return buf[:-len(PROMPT)].decode(errors="replace")

    def cmd(self, line):
        self.s.sendall(line.encode() + b"\n")
        out = self.read_prompt()
        # The monitor echoes the command line (with terminal escapes) before the answer.
        lines = out.replace("\r", "").split("\n")
        return "\n".join(l for l in lines[1:] if l.strip())


def code_bytes(mon, a):
    return " ".join(re.findall(r"0x([0-9a-f]{2})\b", mon.cmd("x/8bx 0x%x" % a)))


class Symbols:
    def __init__(self, path):
        self.addr, self.name = [], []
        if not path:
            return
        rows = []
        for line in open(path, errors="replace"):
            f = line.split()
            if len(f) < 3 or f[1] not in "tTwW":
                continue
            a = int(f[0], 16)
            if a:
                rows.append((a, f[2] + (" " + f[3] if len(f) > 3 else "")))
        rows.sort()
        self.addr = [a for a, _ in rows]
        self.name = [n for _, n in rows]

    def name_of(self, a):
        i = bisect.bisect_right(self.addr, a) - 1
        if i < 0 or a - self.addr[i] > 0x100000:
            return None
        return "%s+0x%x" % (self.name[i], a - self.addr[i])


def kernel_text(a):
    # Kernel image and module/BPF JIT area of x86-64 (4-level paging), whatever the symbols.
    return 0xffffffff80000000 <= a < 0xffffffffff000000


def main():
    sock = sys.argv[1]
    syms = Symbols(sys.argv[2] if len(sys.argv) > 2 else None)
    try:
        mon = Monitor(sock, 15)
    except (OSError, EOFError) as e:
        print("the monitor did not answer (%s): QEMU's main loop is stuck, not only the guest"
              % e)
        return 2
    print("info cpus:")
    for l in mon.cmd("info cpus").split("\n"):
        print("  " + l)
    regs = mon.cmd("info registers -a")
    cpus = re.split(r"^CPU#(\d+)\s*$", regs, flags=re.M)
    for i in range(1, len(cpus) - 1, 2):
        n, text = int(cpus[i]), cpus[i + 1]
        r = dict(re.findall(r"\b(R[A-Z0-9]+|CR[0-9])=([0-9a-f]+)", text))
        rip, rsp, rfl = (int(r.get(k, "0"), 16) for k in ("RIP", "RSP", "RFL"))
        cpl = re.search(r"CPL=(\d)", text)
        hlt = re.search(r"HLT=(\d)", text)
        print("vCPU %d: RIP %016x %s  RSP %016x  RFLAGS %08x (IF=%d)  CPL %s  HLT %s"
              % (n, rip, syms.name_of(rip) or "?", rsp, rfl, (rfl >> 9) & 1,
                 cpl.group(1) if cpl else "?", hlt.group(1) if hlt else "?"))
        for l in text.strip().split("\n")[:8]:
            print("    " + l)
        # The local APIC: an IPI pending in IRR that never reaches ISR is a lost wake-up.
        mon.cmd("cpu %d" % n)
        for l in mon.cmd("info lapic").split("\n"):
            print("    lapic: " + l)
        if not kernel_text(rip):
            continue
        words = re.findall(r"0x([0-9a-f]{16})", mon.cmd("x/%dgx 0x%x" % (STACK_WORDS, rsp)))
        print("    code at RIP: " + code_bytes(mon, rip))
        seen = 0
        for j, w in enumerate(words):
            a = int(w, 16)
            if not kernel_text(a):
                continue
            name = syms.name_of(a)
            # An int3 trap's frame: what the interrupted address holds in memory now. INT3
            # taken again and again where memory holds no 0xcc is an emulator executing a stale
            # translation of code the kernel patched (text_poke_bp), not a kernel loop.
            if name and name.startswith("asm_exc_int3+") and j + 1 + PT_REGS_IP < len(words):
                ip = int(words[j + 1 + PT_REGS_IP], 16)
                print("    int3 frame: interrupted at %016x %s, memory there: %s"
                      % (ip, syms.name_of(ip) or "?", code_bytes(mon, ip)))
            if name is None and syms.addr:
                continue
            print("    stack+0x%03x: %016x %s" % (j * 8, a, name or "?"))
            seen += 1
            if seen >= 40:
                break
    # Twice, a second apart: a vCPU whose RIP moves is running (a livelock), one that stays is
    # spinning on one instruction or waiting in QEMU.
    time.sleep(1)
    again = re.findall(r"RIP=([0-9a-f]+)", mon.cmd("info registers -a"))
    print("RIPs 1 s later: " + ", ".join("%s %s" % (a, syms.name_of(int(a, 16)) or "?")
                                         for a in again))
    return 0


if __name__ == "__main__":
    sys.exit(main())
