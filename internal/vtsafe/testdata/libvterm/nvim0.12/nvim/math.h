#pragma once
#include "nvim/macros_defs.h"
