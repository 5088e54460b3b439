# SPDX-License-Identifier: GPL-2.0
# Bed "arm64-nvhe": the arm64 bed with KVM in nVHE mode (the hypervisor at EL2, the host kernel
# at EL1, as on CPUs without VHE), so exits take the world switch through the EL2 stub.
BED_KAPPEND=kvm-arm.mode=nvhe
. "$HERE/beds/arm64.sh"
