// SPDX-License-Identifier: GPL-2.0
/*
 * A program for uftrace to trace (built with -pg): test_guest_trace_uftrace_host turns its
 * trace, as Debian's uftrace writes it with `dump --chrome`, into a guest trace. main calls
 * middle once and middle calls leaf LEAVES times: 2 + 2 * LEAVES of their B/E events.
 */
#define LEAVES	4

static int __attribute__((noinline)) leaf(int i)
{
	return i * 3;
}

static int __attribute__((noinline)) middle(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += leaf(i);
	return s;
}

int main(void)
{
	return middle(LEAVES) == 18 ? 0 : 1;
}
