// Explicit registration of the built-in operators (no static initializers: the linker would drop them).
#include "ldmsim/kernels/operators.hpp"

namespace ldmsim::kernels {

void register_builtin_operators(Registry& registry) {
  for (auto make : {relu_operator, sigmoid_operator, tanh_operator, add_operator, mul_operator, softmax_operator,
                    fc_operator, max_pool_operator, avg_pool_operator, spatialbn_operator, spatialbn_train_operator}) {
    registry.add(make());
  }
}

}  // namespace ldmsim::kernels
