// A non-owning reference to a callable, for functions that call a callback
// only while they run: passing a lambda allocates nothing (a std::function
// copies a capturing lambda to the heap). The callable must outlive the call
// it is passed to.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace kiln {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
                                        std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& callable)  // NOLINT: implicit, so call sites pass lambdas
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(callable)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace kiln
