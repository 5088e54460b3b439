/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmexit-guest --touch N --uffd-delay-us US: the memory the --touch pages live in (a memslot
 * of its own, never touched by the VMM) is registered with userfaultfd for missing pages, and
 * a handler thread answers each fault US microseconds after it read it (nanosleep, then
 * UFFDIO_COPY of a zero page), as the destination of a post-copy migration does when a page
 * arrives. The vCPU thread that touched the page waits meanwhile in handle_userfault, inside
 * the guest exit the touch caused (SVM NPF, VMX EPT violation): what vmexit stat --split
 * --stacks charges to that exit's reason. Each page faults once (its first touch), so a run
 * resolves exactly vcpus x N faults, the VMM checks that, and each waited >= US.
 * Included by vmexit-guest.c.
 */
#ifndef VMEXIT_GUEST_UFFD_H
#define VMEXIT_GUEST_UFFD_H

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#define UFFD_PAGE	4096ull

struct uffd {
	int fd;
	bool started;
	bool stop;		/* __atomic: the handler thread ends at its next poll */
	pthread_t thread;
	uint64_t delay_ns;
	uint64_t faults;	/* resolved by UFFDIO_COPY; __atomic */
	const char *name;
};

static void *uffd_handler(void *arg)
{
	static uint8_t zero[UFFD_PAGE] __attribute__((aligned(UFFD_PAGE)));
	struct uffd *u = arg;
	struct pollfd p = { .fd = u->fd, .events = POLLIN };

	pthread_setname_np(pthread_self(), "uffd");
	while (!__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE)) {
		struct uffdio_copy copy = { .src = (uintptr_t)zero, .len = UFFD_PAGE };
		struct timespec t = { .tv_sec = (time_t)(u->delay_ns / 1000000000),
				      .tv_nsec = (long)(u->delay_ns % 1000000000) };
		struct uffd_msg m;

		/* A short poll: the VMM stops the thread after its vCPUs ended. */
		if (poll(&p, 1, 50) <= 0 || read(u->fd, &m, sizeof(m)) != sizeof(m) ||
		    m.event != UFFD_EVENT_PAGEFAULT)
			continue;
		while (nanosleep(&t, &t) && errno == EINTR)
			;
		copy.dst = m.arg.pagefault.address & ~(UFFD_PAGE - 1);
		if (ioctl(u->fd, UFFDIO_COPY, &copy) == 0) {
			__atomic_add_fetch(&u->faults, 1, __ATOMIC_RELAXED);
			continue;
		}
		/* A vCPU left waiting would hang the run: end it, said. */
		errmsg("%s: UFFDIO_COPY at 0x%llx: %s", u->name, (unsigned long long)copy.dst,
		       strerror(errno));
		_exit(1);
	}
	return NULL;
}

/* Registers [mem, mem + len) and starts the handler. 0, or -1 (said). */
static int uffd_start(struct uffd *u, void *mem, size_t len, uint64_t delay_ns,
		      const char *name)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)mem, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int e;

	u->name = name;
	u->delay_ns = delay_ns;
	/* Without UFFD_USER_MODE_ONLY: KVM's own accesses to the page must fault here too. */
	u->fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (u->fd < 0) {
		errmsg("%s: userfaultfd: %s (--uffd-delay-us needs root, or "
		       "vm.unprivileged_userfaultfd=1, and a kernel with CONFIG_USERFAULTFD)",
		       name, strerror(errno));
		return -1;
	}
	if (ioctl(u->fd, UFFDIO_API, &api) || ioctl(u->fd, UFFDIO_REGISTER, &reg)) {
		errmsg("%s: userfaultfd registration of the --touch memory: %s", name,
		       strerror(errno));
		return -1;
	}
	e = pthread_create(&u->thread, NULL, uffd_handler, u);
	if (e) {
		errmsg("%s: pthread_create: %s", name, strerror(e));
		return -1;
	}
	u->started = true;
	return 0;
}

static void uffd_stop(struct uffd *u)
{
	if (u->started) {
		__atomic_store_n(&u->stop, true, __ATOMIC_RELEASE);
		pthread_join(u->thread, NULL);
		u->started = false;
	}
	if (u->fd > 0)
		close(u->fd);
	u->fd = -1;
}

#endif /* VMEXIT_GUEST_UFFD_H */
