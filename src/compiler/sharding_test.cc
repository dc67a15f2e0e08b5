#include "compiler/sharding.h"

#include <gtest/gtest.h>

namespace kiln::compiler {
namespace {

MeshTable Meshes() {
  MeshTable meshes;
  meshes.emplace("mesh", *ParseMesh(R"(#sdy.mesh<["x"=2, "y"=4]>)"));
  meshes.emplace("reversed", *ParseMesh(R"(#sdy.mesh<["i"=4], device_ids=[3, 2, 1, 0]>)"));
  return meshes;
}

TEST(ShardingTest, MeshNumbersDevicesRowMajorOrByDeviceIds) {
  MeshTable meshes = Meshes();
  const Mesh& mesh = meshes.at("mesh");
  EXPECT_EQ(mesh.num_devices(), 8);
  EXPECT_EQ(*mesh.CoordinatesOf(6), (std::vector<int64_t>{1, 2}));
  const int64_t coordinates[] = {1, 2};
  EXPECT_EQ(mesh.DeviceAt(coordinates), 6);
  EXPECT_FALSE(mesh.CoordinatesOf(8).has_value());
  const Mesh& reversed = meshes.at("reversed");
  EXPECT_EQ(*reversed.CoordinatesOf(3), (std::vector<int64_t>{0}));
  EXPECT_EQ(*reversed.CoordinatesOf(0), (std::vector<int64_t>{3}));
}

TEST(ShardingTest, TilesOfAShardingOverTwoAxes) {
  auto sharding = ParseSharding(R"(#sdy.sharding<@mesh, [{"y", "x"}, {}]>)", Meshes());
  ASSERT_TRUE(sharding.ok()) << sharding.status().ToString();
  EXPECT_EQ(sharding->Tiles(0), 8);
  EXPECT_EQ(sharding->Tiles(1), 1);
  // "y" major: device (x=1, y=2) holds tile 2 * 2 + 1.
  const int64_t coordinates[] = {1, 2};
  EXPECT_EQ(sharding->TileOf(0, coordinates), 5);
  const int64_t global[] = {16, 3};
  EXPECT_EQ(*sharding->LocalDims(global), (std::vector<int64_t>{2, 3}));
  const int64_t uneven[] = {12, 3};
  EXPECT_EQ(sharding->LocalDims(uneven).status().code(), StatusCode::kUnimplemented);
  // Padded tiles: 12 rows over 8 tiles are tiles of 2, the last two past
  // the end; an even split is the local shape.
  EXPECT_EQ(*sharding->PaddedDims(uneven), (std::vector<int64_t>{2, 3}));
  const int64_t few[] = {3, 3};
  EXPECT_EQ(*sharding->PaddedDims(few), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(*sharding->PaddedDims(global), *sharding->LocalDims(global));
  const int64_t rank_one[] = {12};
  EXPECT_EQ(sharding->PaddedDims(rank_one).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(sharding->IsReplicated());
}

TEST(ShardingTest, SubAxesOpenDimensionsPrioritiesAndReplicatedAxes) {
  auto sharding = ParseSharding(R"(#sdy.sharding<@mesh, [{"y":(2)2, ?}p1, {?}], replicated={"x"}>)",
                                Meshes());
  ASSERT_TRUE(sharding.ok()) << sharding.status().ToString();
  EXPECT_EQ(sharding->Tiles(0), 2);
  // "y":(2)2 is the minor half of y: y = 3 -> 1, y = 2 -> 0.
  const int64_t y3[] = {0, 3};
  const int64_t y2[] = {0, 2};
  EXPECT_EQ(sharding->TileOf(0, y3), 1);
  EXPECT_EQ(sharding->TileOf(0, y2), 0);
  EXPECT_TRUE(sharding->dims[1].empty());
}

TEST(ShardingTest, SubAxesReadOverARefinedMeshAreItsParts) {
  MeshTable meshes = Meshes();
  const AxisRef used[] = {{"y", 1, 2}, {"y", 2, 2}, {"x", 1, 2}};
  meshes["mesh"] = RefineMesh(meshes.at("mesh"), used);
  const Mesh& mesh = meshes.at("mesh");
  // "y"=4 cut at 2 is two axes of 2; "x" (its only sub-axis the whole of
  // it) stays; the devices keep their order.
  EXPECT_EQ(mesh.axes, (std::vector<std::string>{"x", "y:(1)2", "y:(2)2"}));
  EXPECT_EQ(mesh.sizes, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(*mesh.CoordinatesOf(6), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(mesh.WrittenSize("y"), 4);
  EXPECT_EQ(mesh.WrittenSize("z"), -1);
  auto sharding = ParseSharding(R"(#sdy.sharding<@mesh, [{"y":(2)2}, {"x", "y"}]>)", meshes);
  ASSERT_TRUE(sharding.ok()) << sharding.status().ToString();
  ASSERT_EQ(sharding->dims[0].size(), 1u);
  EXPECT_EQ(sharding->dims[0][0].name, "y:(2)2");
  EXPECT_EQ(sharding->dims[0][0].size, 0);  // a whole axis of the refined mesh
  ASSERT_EQ(sharding->dims[1].size(), 3u);  // "y" is both its parts
  EXPECT_EQ(sharding->dims[1][1].name, "y:(1)2");
  EXPECT_EQ(sharding->dims[1][2].name, "y:(2)2");
  // The same tiles as the sub-axis over the mesh as written.
  auto written = ParseSharding(R"(#sdy.sharding<@mesh, [{"y":(2)2}, {"x", "y"}]>)", Meshes());
  ASSERT_TRUE(written.ok());
  for (int64_t device = 0; device < 8; ++device) {
    const std::vector<int64_t> at = *mesh.CoordinatesOf(device);
    const std::vector<int64_t> at_written = *written->mesh.CoordinatesOf(device);
    for (size_t d = 0; d < 2; ++d) {
      EXPECT_EQ(sharding->TileOf(d, at), written->TileOf(d, at_written)) << device << " " << d;
    }
  }
  // XLA gives results left to propagation no sub-axes: a part alone goes,
  // and what follows it; both parts in order are the axis.
  auto result = ParseSharding(R"(#sdy.sharding<@mesh, [{"x", "y":(2)2}, {"y"}]>)", meshes);
  ASSERT_TRUE(result.ok());
  TensorSharding kept = WithoutSubAxes(*result);
  ASSERT_EQ(kept.dims[0].size(), 1u);
  EXPECT_EQ(kept.dims[0][0].name, "x");
  EXPECT_EQ(kept.dims[1].size(), 2u);
  EXPECT_TRUE(WithoutSubAxes(*written).dims[0].empty());
  // A sub-axis that cuts a part of the refinement resolves to nothing, and
  // reads as an error, not a guess: "z"=8 cut at 2 has parts (1)2, (2)4.
  const AxisRef cut[] = {{"z", 1, 2}};
  MeshTable other;
  other["m"] = RefineMesh(*ParseMesh(R"(#sdy.mesh<["z"=8]>)"), cut);
  EXPECT_FALSE(other["m"].Resolve(AxisRef{"z", 4, 2}).has_value());
  // Sizes no axis has (a collective's unchecked sub_axis_info) resolve to
  // nothing and cut nothing, without overflowing.
  const int64_t huge = int64_t{1} << 62;
  EXPECT_FALSE(other["m"].Resolve(AxisRef{"z", huge, huge}).has_value());
  const AxisRef wild[] = {{"z", huge, huge}, {"z", -2, 4}, {"z", 1, 0}};
  EXPECT_TRUE(RefineMesh(*ParseMesh(R"(#sdy.mesh<["z"=8]>)"), wild).written.empty());
  EXPECT_EQ(other["m"].Resolve(AxisRef{"z", 2, 4})->size(), 1u);
  auto cutting = ParseSharding(R"(#sdy.sharding<@m, [{"z":(4)2}]>)", other);
  EXPECT_EQ(cutting.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(cutting.status().message().find("cuts a part"), std::string::npos);
}

TEST(ShardingTest, CutsThatDoNotChainLeaveTheAxisWhole) {
  const Mesh mesh = *ParseMesh(R"(#sdy.mesh<["x"=6]>)");
  const AxisRef used[] = {{"x", 1, 2}, {"x", 1, 3}};  // cuts at 2 and 3
  const Mesh refined = RefineMesh(mesh, used);
  EXPECT_EQ(refined.axes, (std::vector<std::string>{"x"}));
  EXPECT_TRUE(refined.written.empty());
}

TEST(ShardingTest, UnreducedAxesHoldPartialSums) {
  auto sharding = ParseSharding(R"(#sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>)", Meshes());
  ASSERT_TRUE(sharding.ok()) << sharding.status().ToString();
  ASSERT_EQ(sharding->unreduced.size(), 1u);
  EXPECT_EQ(sharding->unreduced[0].name, "y");
  // Partial sums over y are not a replicated value, even with no split.
  auto whole = ParseSharding(R"(#sdy.sharding<@mesh, [{}, {}], unreduced={"x", "y"}>)", Meshes());
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_FALSE(whole->IsReplicated());
  EXPECT_EQ(
      ParseSharding(R"(#sdy.sharding<@mesh, [{}], unreduced=max{"x"}>)", Meshes()).status().code(),
      StatusCode::kInvalidArgument);
}

// PyTorch/XLA's Megatron split on a 2 x 2 mesh ("data", "model"): the
// batch's rows over "data" (devices {0,1} | {2,3}), the weight's columns
// over "model" ({0,2} | {1,3}), the rows of another over both. GSPMD reads
// each over a mesh of its own; one mesh of two axes holds all three.
TEST(ShardingTest, GspmdShardingsOfOneLogicalMeshShareOne) {
  std::vector<TensorSharding> shardings;
  for (const char* text :
       {"{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
        "{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}", "{devices=[4,1]<=[4]}"}) {
    auto parsed = ParseHloSharding(text, 4);
    ASSERT_TRUE(parsed.ok() && parsed->has_value()) << text;
    shardings.push_back(**parsed);
  }
  std::optional<Mesh> mesh = CommonMesh(shardings);
  ASSERT_TRUE(mesh.has_value());
  EXPECT_EQ(mesh->axes, (std::vector<std::string>{"_g0", "_g1"}));
  EXPECT_EQ(mesh->sizes, (std::vector<int64_t>{2, 2}));
  for (const TensorSharding& sharding : shardings) {
    std::optional<TensorSharding> common = OnMesh(sharding, *mesh);
    ASSERT_TRUE(common.has_value());
    // Every device holds the same tile under both.
    for (int64_t device = 0; device < 4; ++device) {
      for (size_t d = 0; d < 2; ++d) {
        EXPECT_EQ(common->TileOf(d, *mesh->CoordinatesOf(device)),
                  sharding.TileOf(d, *sharding.mesh.CoordinatesOf(device)))
            << device;
      }
    }
  }
  EXPECT_EQ(OnMesh(shardings[1], *mesh)->dims[1].front().name, "_g1");
  EXPECT_EQ(OnMesh(shardings[2], *mesh)->dims[0].size(), 2u);
  // Devices in an order no axis of the mesh follows: no common mesh.
  auto odd = ParseHloSharding("{devices=[2,1,2]0,3,1,2 last_tile_dim_replicate}", 4);
  ASSERT_TRUE(odd.ok() && odd->has_value());
  EXPECT_FALSE(OnMesh(**odd, *mesh).has_value());
  shardings.push_back(**odd);
  std::optional<Mesh> none = CommonMesh(shardings);
  EXPECT_FALSE(none.has_value());
}

// A sharding as XLA's HloSharding text, read back as the same tiles.
TEST(ShardingTest, HloShardingTextSaysTheTileAssignment) {
  EXPECT_EQ(HloShardingText(std::nullopt), "{replicated}");
  for (const char* text : {"{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}",
                           "{devices=[1,4]3,2,1,0}", "{devices=[2,2]0,1,2,3}"}) {
    auto parsed = ParseHloSharding(text, 4);
    ASSERT_TRUE(parsed.ok() && parsed->has_value()) << text;
    EXPECT_EQ(HloShardingText(*parsed), text);
  }
  // Partial sums over "y" of a 2 x 2 mesh, rows split over "x".
  auto partial = ParseSharding(R"(#sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>)", Meshes());
  ASSERT_TRUE(partial.ok()) << partial.status().ToString();
  const std::string text = HloShardingText(*partial);
  EXPECT_NE(text.find("last_tile_dims={unreduced"), std::string::npos) << text;
}

TEST(ShardingTest, GspmdShardingsBecomeMeshesOfTheirTileAssignment) {
  // Two tiles of rows, each on two devices: [[0, 2], [1, 3]] after T(1,0).
  auto sharding = ParseHloSharding("{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}", 4);
  ASSERT_TRUE(sharding.ok()) << sharding.status().ToString();
  ASSERT_TRUE(sharding->has_value());
  const TensorSharding& rows = **sharding;
  ASSERT_EQ(rows.dims.size(), 2u);
  EXPECT_EQ(rows.Tiles(0), 2);
  EXPECT_EQ(rows.Tiles(1), 1);
  EXPECT_EQ(rows.mesh.device_ids, (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(rows.TileOf(0, *rows.mesh.CoordinatesOf(2)), 0);
  EXPECT_EQ(rows.TileOf(0, *rows.mesh.CoordinatesOf(1)), 1);
  // Listed devices; replicated and maximal values are whole.
  auto listed = ParseHloSharding("{devices=[1,4]3,2,1,0}", 4);
  ASSERT_TRUE(listed.ok() && listed->has_value());
  EXPECT_EQ((*listed)->TileOf(1, *(*listed)->mesh.CoordinatesOf(3)), 0);
  EXPECT_FALSE(ParseHloSharding("{replicated}", 4)->has_value());
  EXPECT_FALSE(ParseHloSharding("{maximal device=1}", 4)->has_value());
  EXPECT_EQ(ParseHloSharding("{manual}", 4).status().code(), StatusCode::kUnimplemented);
  EXPECT_TRUE(IsManualHloSharding("{manual}"));
  // A shard_map nested in another: rows split in two, a manual subgroup
  // (the outer region's devices) and a replicated one.
  auto nested = ParseHloSharding("{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}", 4);
  ASSERT_TRUE(nested.ok() && nested->has_value()) << nested.status().ToString();
  EXPECT_EQ((*nested)->dims.size(), 2u);
  EXPECT_EQ((*nested)->mesh.axes.back(), "_m");
  EXPECT_EQ((*nested)->TileOf(0, *(*nested)->mesh.CoordinatesOf(1)), 1);
  auto both = ParseHloSharding("{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}", 8);
  ASSERT_TRUE(both.ok() && both->has_value()) << both.status().ToString();
  EXPECT_EQ((*both)->dims.size(), 1u);
  // A scalar's: every tile dimension a subgroup. Three are more than HLO has.
  auto scalar = ParseHloSharding("{devices=[2,2]<=[4] last_tile_dims={manual, replicated}}", 4);
  ASSERT_TRUE(scalar.ok()) << scalar.status().ToString();
  EXPECT_FALSE(scalar->has_value());
  EXPECT_EQ(ParseHloSharding("{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated, manual}}",
                             4)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  // Malformed: an iota of another size, tiles for more devices than the
  // program has, a repeated device, an empty or partial transpose.
  for (const char* bad :
       {"{devices=[2,2]<=[3]}", "{devices=[65536,65536]<=[4294967296]}", "{devices=[1,4]0,1,1,2}",
        "{devices=[4,1]<=[2,2]T()}", "{devices=[4,1]<=[2,2]T(1)}", "{devices=[2,1]<=[2]}"}) {
    EXPECT_EQ(ParseHloSharding(bad, 4).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ShardingTest, InlineMeshesAndPerValueLists) {
  auto values = ParseShardingPerValue(
      R"(#sdy.sharding_per_value<[<@mesh, [{"x"}]>, <mesh<["a"=2]>, [{}, {"a"}]>]>)", Meshes());
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  ASSERT_EQ(values->size(), 2u);
  EXPECT_EQ((*values)[0].Tiles(0), 2);
  EXPECT_EQ((*values)[1].mesh.axes, (std::vector<std::string>{"a"}));
  auto axes = ParseManualAxes(R"(#sdy<manual_axes{"x", "y"}>)");
  ASSERT_TRUE(axes.ok());
  EXPECT_EQ(*axes, (std::vector<std::string>{"x", "y"}));
}

TEST(ShardingTest, MalformedTextIsAnErrorNamingThePlace) {
  for (const char* text : {R"(#sdy.sharding<@nowhere, [{}]>)", R"(#sdy.sharding<@mesh, [{"z"}]>)",
                           R"(#sdy.sharding<@mesh, [{"x"}>)", R"(#sdy.sharding<@mesh>)",
                           R"(#sdy.sharding<@mesh, [{"y":(3)2}]>)"}) {
    auto sharding = ParseSharding(text, Meshes());
    EXPECT_EQ(sharding.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(sharding.status().message().find("sdy attribute"), std::string::npos) << text;
  }
  EXPECT_FALSE(ParseMesh(R"(#sdy.mesh<["x"=0]>)").ok());
  EXPECT_FALSE(ParseMesh(R"(#sdy.mesh<["x"=2], device_ids=[0]>)").ok());
}

// Integers in the attribute text go through the checked parser: '-' alone,
// nothing, 20 digits or trailing garbage is INVALID_ARGUMENT naming what was
// found, never a std::stoll exception (which ended kiln-tool).
TEST(ShardingTest, MalformedIntegersAreErrorsNotExceptions) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{R"(#sdy.mesh<["x"=-]>)", "expected a decimal integer, found \"-\""},
           Case{R"(#sdy.mesh<["x"=]>)", "expected an integer"},
           Case{R"(#sdy.mesh<["x"=99999999999999999999]>)",
                "fits in 64 bits, found \"99999999999999999999\""},
           Case{R"(#sdy.mesh<["x"=-99999999999999999999]>)", "fits in 64 bits"},
           Case{R"(#sdy.mesh<["x"=2abc]>)", "expected ','"},
           Case{R"(#sdy.mesh<["x"=2], device_ids=[0, -]>)", "found \"-\""},
           Case{R"(#sdy.mesh<["x"=65536, "y"=65536, "z"=2]>)",
                "a mesh of more than 4294967296 devices"},
       }) {
    StatusOr<Mesh> mesh = ParseMesh(c.text);
    ASSERT_FALSE(mesh.ok()) << c.text;
    EXPECT_EQ(mesh.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(mesh.status().message().find(c.message), std::string::npos)
        << c.text << ": " << mesh.status().ToString();
    EXPECT_NE(mesh.status().message().find("sdy attribute"), std::string::npos) << c.text;
  }
  for (const char* text : {R"(#sdy.sharding<@mesh, [{"y":(-)2}]>)",
                           R"(#sdy.sharding<@mesh, [{"y":(2)99999999999999999999}]>)",
                           R"(#sdy.sharding<mesh<["a"=-]>, [{}]>)"}) {
    auto sharding = ParseSharding(text, Meshes());
    EXPECT_EQ(sharding.status().code(), StatusCode::kInvalidArgument) << text;
  }
}

}  // namespace
}  // namespace kiln::compiler
