#ifndef EXAMPLE_SRC_MIDDLE_H_
#define EXAMPLE_SRC_MIDDLE_H_

uv_link_methods_t middle_methods;

#endif  /* EXAMPLE_SRC_MIDDLE_H_ */
