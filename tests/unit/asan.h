#pragma once
// SPLICE_TEST_ASAN: 1 in an AddressSanitizer build (GCC's macro, or clang's feature test), else 0.
// Tests of address-space limits (`ulimit -v`, RLIMIT_AS) and of time or memory bounds skip there:
// ASan maps terabytes of shadow memory and changes both.
#if defined(__SANITIZE_ADDRESS__)
#define SPLICE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPLICE_TEST_ASAN 1
#endif
#endif
#ifndef SPLICE_TEST_ASAN
#define SPLICE_TEST_ASAN 0
#endif
