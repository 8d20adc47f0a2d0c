#include "test-common.h"
#include "test-list.h"
#include "mini/main.h"
