#include <gtest/gtest.h>
// placeholder
TEST(Placeholder, X) {}
