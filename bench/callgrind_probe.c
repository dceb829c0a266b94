/* Valgrind's client requests are C macros: this wraps the four that bench/train_instructions.py
 * calls through ctypes, so a Python process under callgrind can count exactly the instructions
 * of one training run. Outside valgrind every call is a no-op.
 * Built at bench time: gcc -O2 -shared -fPIC -o libprobe.so callgrind_probe.c */
#include <valgrind/callgrind.h>

void probe_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void probe_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
void probe_zero(void) { CALLGRIND_ZERO_STATS; }
void probe_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
