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

// A one-device client and its default memory space for each test.
class OneDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeTestClient();
    ASSERT_NE(client_, nullptr);
    space_ = client_->devices()[0]->default_memory_space();
  }
  std::unique_ptr<Client> client_;
  MemorySpace* space_ = nullptr;
};

}  // namespace kiln::runtime
