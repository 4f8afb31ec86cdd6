// Included first by everything the session compiles (no include guard, on purpose):
// the model's code only logs, so Cling compiles it without optimization, which is several times faster.
#pragma cling optimize(0)
