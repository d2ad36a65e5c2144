/* log.h -- the one log: opt-in tracing (VYRE_LOG=debug) and warnings, each line prefixed by the component that writes it. */
#ifndef VYRE_SUPPORT_LOG_H
#define VYRE_SUPPORT_LOG_H

#if defined(__GNUC__)
#define VYRE__LOG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define VYRE__LOG_PRINTF(f, a)
#endif

/* 1 when VYRE_LOG asks for tracing (debug or trace).  Read once per
 * process. */
int vyre__log_debug(void);

/*
 * Tracing: one line "WHO: message" on stderr when vyre__log_debug().
 * Never the only signal of a failure (every failure is also returned).
 * `who` names the component ("vyre-cuda", "vyre-host", "vyre-ref").
 * Thread-safe; a line longer than 2 KiB is cut.
 */
void vyre__log(const char *who, const char *fmt, ...) VYRE__LOG_PRINTF(2, 3);

/* A warning: printed unless VYRE_LOG=off; says what is wrong and the fix.
 * Used for ignored configuration, never for a failure that is returned. */
void vyre__warn(const char *who, const char *fmt, ...) VYRE__LOG_PRINTF(2, 3);

#endif /* VYRE_SUPPORT_LOG_H */
