#pragma once
// <fcntl.h> and <sys/file.h> (which includes it) for splice's own sources. glibc declares a
// function ::splice(2) there, whose name clashes with namespace splice; this header includes
// them with that one declaration renamed, so open(2), openat(2), fcntl(2), flock(2) and the
// O_* flags can be used. Include it instead of <fcntl.h> or <sys/file.h>, before any header
// that could pull those in.

#define splice splice_glibc_syscall_unused
#include <fcntl.h>
#include <sys/file.h>
#undef splice
