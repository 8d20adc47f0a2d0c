#ifndef TEST_SRC_TEST_LIST_H_
#define TEST_SRC_TEST_LIST_H_

#define TEST_ENUM(V)                                                          \
    V(uv_link_source_t)                                                       \
    V(uv_link_observer_t)                                                     \
    V(close_depth)                                                            \
    V(stop_read_on_error)                                                     \
    V(strerror)                                                               \

#endif  /* TEST_SRC_TEST_LIST_H_ */
