#define i_implement
#include "../include/stc/cregex.h"
