package termhost

// Linux's real-time signals as the C library numbers them (glibc and
// musl keep 32 and 33 for themselves).
const sigrtmin, sigrtmax = 34, 64
