// Clients for the runtime's unit tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "runtime/client.h"

namespace kiln::runtime {

// A client of `devices` host devices; null and a test failure if creating it fails.
inline std::unique_ptr<Client> MakeTestClient(int devices = 1) {
  ClientOptions options;
  options.num_devices = devices;
  auto client = Client::Create(options, CreateHostBackend());
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

}  // namespace kiln::runtime
