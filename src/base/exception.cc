#include "base/exception.h"

#include <exception>
#include <new>

namespace kiln {

Status StatusFromCurrentException(std::string_view context) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return ResourceExhausted(context, ": out of host memory");
  } catch (const std::exception& exception) {
    return Internal(context, ": unexpected exception: ", exception.what());
  } catch (...) {
    return Internal(context, ": unexpected exception of a non-standard type");
  }
}

}  // namespace kiln
