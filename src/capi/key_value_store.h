// The key-value callbacks of PJRT_Client_Create as a runtime::KeyValueStore
// (jax.distributed's coordination service, in a job of several processes).
#pragma once

#include <memory>

#include "base/status.h"
#include "runtime/job.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace kiln::capi {

// The store behind `args`' callbacks; INVALID_ARGUMENT naming the missing
// callback when a job of several processes lacks one. Call only when
// num_nodes > 1: jaxlib leaves the fields uninitialized otherwise.
StatusOr<std::shared_ptr<runtime::KeyValueStore>> KeyValueStoreFrom(
    const PJRT_Client_Create_Args& args);

}  // namespace kiln::capi
