#pragma once
#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]))
#define FALLTHROUGH __attribute__((fallthrough))
#define UNREACHABLE __builtin_unreachable()
#define FUNC_ATTR_PRINTF(x, y)
#define DLLEXPORT
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
