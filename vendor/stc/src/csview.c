#define i_implement
#include "../include/stc/csview.h"
