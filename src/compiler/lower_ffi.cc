// custom_call to a handler users registered for Kiln (jax.ffi, docs/ffi.md):
// typed FFI calls (api_version 4, or JAX's api_version 1 with its
// attributes in `mhlo.backend_config`) and the custom-call API before FFI
// (api_version 1-3 with a string backend_config). The call is bound to its
// handler at compile time (ffi::Call: attributes encoded once, the handler's
// instantiate stage run); its node passes the run's buffers to it.
#include <numeric>

#include "base/small_vector.h"
#include "compiler/lowering.h"
#include "ffi/call.h"
#include "kernels/copy.h"

namespace kiln::compiler {
namespace {

// Which API the call uses, and its attributes: as XLA reads a custom_call,
// a dictionary in `mhlo.backend_config` (what jax.ffi.ffi_call emits) or
// in backend_config makes it a typed FFI call.
struct CallForm {
  ffi::ApiVersion version = ffi::ApiVersion::kOriginal;
  ir::Attribute attributes;
  std::string opaque;
};

StatusOr<CallForm> FormOf(const ir::Operation& op) {
  CallForm form;
  const ir::Attribute version = op.GetAttr("api_version");
  int64_t number = 1;  // absent: API_VERSION_ORIGINAL
  if (version) {
    if (!version.Is(ir::AttrKind::kInteger)) {
      return InvalidArgument(Lowering::Where(op), ": custom_call's api_version is not an integer");
    }
    number = version->int_value;
  }
  if (number < 1 || number > 4) {
    return InvalidArgument(Lowering::Where(op), ": custom_call api_version ", number,
                           " is not one of 1-4 (ORIGINAL, STATUS_RETURNING, "
                           "STATUS_RETURNING_UNIFIED, TYPED_FFI)");
  }
  form.version = static_cast<ffi::ApiVersion>(number);
  const ir::Attribute mhlo = op.GetAttr("mhlo.backend_config");
  const ir::Attribute config = op.GetAttr("backend_config");
  if (mhlo.Is(ir::AttrKind::kDictionary)) {
    form.version = ffi::ApiVersion::kTypedFfi;
    form.attributes = mhlo;
  } else if (config.Is(ir::AttrKind::kDictionary)) {
    form.version = ffi::ApiVersion::kTypedFfi;
    form.attributes = config;
  } else if (config.Is(ir::AttrKind::kString)) {
    if (form.version == ffi::ApiVersion::kTypedFfi && !config->text.empty() &&
        config->text != "{}") {
      return InvalidArgument(Lowering::Where(op),
                             ": a typed FFI custom_call takes its attributes as a dictionary; "
                             "found the string backend_config \"",
                             config->text.substr(0, 80), "\"");
    }
    form.opaque = config->text;
  }
  return form;
}

// The custom_call's layout of operand or result `index` (`attr`: the
// operand_layouts or result_layouts array) as the order to read the
// logical dimensions in, major to minor; empty when it is the row-major
// default (or absent).
StatusOr<std::vector<int>> PhysicalOrder(const ir::Operation& op, const char* attr, size_t index,
                                         size_t rank) {
  const ir::Attribute layouts = op.GetAttr(attr);
  if (!layouts) return std::vector<int>{};
  if (!layouts.Is(ir::AttrKind::kArray) || index >= layouts->elements.size()) {
    return InvalidArgument(Lowering::Where(op), ": custom_call's ", attr,
                           " has no layout for value ", index);
  }
  std::optional<std::vector<int64_t>> minor_to_major = ir::IntegersOf(layouts->elements[index]);
  if (!minor_to_major || minor_to_major->size() != rank) {
    return InvalidArgument(Lowering::Where(op), ": custom_call's ", attr, "[", index,
                           "] is not a layout of ", rank, " dimensions");
  }
  std::vector<int> order;
  std::vector<bool> seen(rank, false);
  for (size_t i = rank; i-- > 0;) {
    const int64_t dim = (*minor_to_major)[i];
    if (dim < 0 || dim >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(dim)]) {
      return InvalidArgument(Lowering::Where(op), ": custom_call's ", attr, "[", index,
                             "] is not a permutation of 0..", rank - 1);
    }
    seen[static_cast<size_t>(dim)] = true;
    order.push_back(static_cast<int>(dim));
  }
  for (size_t j = 0; j < rank; ++j) {
    if (order[j] != static_cast<int>(j)) return order;
  }
  return std::vector<int>{};
}

// A node copying `input` (of `shape`) into the dense array whose dimension
// j is `shape`'s dimension order[j] (`inverse`: the other way round, from
// that array back to `shape`).
StatusOr<ValueId> EmitPermute(Lowering& lowering, const ir::Operation& op, ValueId input,
                              const Shape& shape, const std::vector<int>& order, bool inverse) {
  const size_t rank = shape.dims.size();
  std::vector<int64_t> physical(rank);
  for (size_t j = 0; j < rank; ++j) physical[j] = shape.dims[static_cast<size_t>(order[j])];
  std::vector<int64_t> strides(rank), dims;
  if (!inverse) {
    // Result dimension j walks logical dimension order[j].
    std::vector<int64_t> logical(rank);
    kernels::DenseStrides(shape.dims, logical);
    for (size_t j = 0; j < rank; ++j) strides[j] = logical[static_cast<size_t>(order[j])];
    dims = physical;
  } else {
    // Result dimension d (logical) walks the physical dimension holding it.
    std::vector<int64_t> dense(rank);
    kernels::DenseStrides(physical, dense);
    for (size_t j = 0; j < rank; ++j) strides[static_cast<size_t>(order[j])] = dense[j];
    dims = shape.dims;
  }
  const size_t bytes = GetElementTypeInfo(shape.element_type).storage_bytes;
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> out,
                        lowering.EmitNode(op, {input}, {Shape{shape.element_type, dims}},
                                          [bytes, dims, strides](RunContext& ctx) {
                                            kernels::CopyStrided(bytes, dims, ctx.in(0), strides,
                                                                 ctx.out(0));
                                            return Status::Ok();
                                          }));
  return out[0];
}

// output_operand_aliases as (result, operand) pairs.
StatusOr<std::vector<std::pair<size_t, size_t>>> Aliases(const ir::Operation& op,
                                                         const std::vector<Shape>& args,
                                                         const std::vector<Shape>& rets) {
  std::vector<std::pair<size_t, size_t>> aliases;
  const ir::Attribute list = op.GetAttr("output_operand_aliases");
  if (!list) return aliases;
  if (!list.Is(ir::AttrKind::kArray)) {
    return InvalidArgument(Lowering::Where(op), ": output_operand_aliases is not an array");
  }
  for (const ir::Attribute& alias : list->elements) {
    const std::vector<int64_t> output = FieldInts(alias, "output_tuple_indices");
    const int64_t operand = FieldInt(alias, "operand_index");
    if (!FieldInts(alias, "operand_tuple_indices").empty() || output.size() > 1) {
      return Unimplemented(Lowering::Where(op), ": an alias into a tuple operand or result");
    }
    const int64_t result = output.empty() ? 0 : output[0];
    if (operand < 0 || static_cast<size_t>(operand) >= args.size() || result < 0 ||
        static_cast<size_t>(result) >= rets.size()) {
      return InvalidArgument(Lowering::Where(op), ": output_operand_alias of result ", result,
                             " to operand ", operand, " of ", rets.size(), " results and ",
                             args.size(), " operands");
    }
    const Shape& from = args[static_cast<size_t>(operand)];
    const Shape& to = rets[static_cast<size_t>(result)];
    if (from.element_type != to.element_type || from.dims != to.dims) {
      return InvalidArgument(Lowering::Where(op), ": result ", result, " (", to.ToString(),
                             ") aliases operand ", operand, " (", from.ToString(),
                             "), which has another type");
    }
    aliases.emplace_back(static_cast<size_t>(result), static_cast<size_t>(operand));
  }
  return aliases;
}

}  // namespace

StatusOr<bool> LowerRegisteredCustomCall(Lowering& lowering, const ir::Operation& op,
                                         std::string_view target) {
  KILN_ASSIGN_OR_RETURN(CallForm form, FormOf(op));
  if (!ffi::IsRegistered(target, form.version)) return false;
  ffi::CallSpec spec;
  spec.target = std::string(target);
  spec.api_version = form.version;
  spec.attributes = form.attributes;
  spec.opaque = form.opaque;
  std::vector<ValueId> inputs;
  std::vector<Shape> physical_rets;
  std::vector<std::vector<int>> arg_orders, ret_orders;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, i));
    const Shape shape = lowering.graph().shape(input);
    KILN_ASSIGN_OR_RETURN(std::vector<int> order,
                          PhysicalOrder(op, "operand_layouts", i, shape.dims.size()));
    if (!order.empty()) {
      KILN_ASSIGN_OR_RETURN(input, EmitPermute(lowering, op, input, shape, order, false));
    }
    spec.args.push_back(shape);
    arg_orders.push_back(std::move(order));
    inputs.push_back(input);
  }
  for (size_t r = 0; r < op.num_results(); ++r) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(r)));
    KILN_ASSIGN_OR_RETURN(std::vector<int> order,
                          PhysicalOrder(op, "result_layouts", r, shape.dims.size()));
    Shape physical = shape;
    for (size_t j = 0; j < order.size(); ++j) {
      physical.dims[j] = shape.dims[static_cast<size_t>(order[j])];
    }
    spec.rets.push_back(std::move(shape));
    physical_rets.push_back(std::move(physical));
    ret_orders.push_back(std::move(order));
  }
  KILN_ASSIGN_OR_RETURN(auto aliases, Aliases(op, spec.args, spec.rets));
  for (const auto& [result, operand] : aliases) {
    if (arg_orders[operand] != ret_orders[result]) {
      return Unimplemented(Lowering::Where(op), ": result ", result, " aliases operand ", operand,
                           " in another layout");
    }
  }
  std::vector<size_t> ret_bytes;
  for (const Shape& shape : physical_rets) ret_bytes.push_back(shape.ByteSize());
  const std::vector<Shape> logical_rets = spec.rets;
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const ffi::Call> call, ffi::Call::Create(std::move(spec)));
  const size_t before = lowering.graph().nodes.size();
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> outputs,
      lowering.EmitNode(
          op, inputs, physical_rets,
          [call, aliases, ret_bytes](RunContext& ctx) -> Status {
            SmallVector<void*, 8> args(ctx.num_inputs());
            SmallVector<void*, 4> rets(ctx.num_outputs());
            for (size_t i = 0; i < args.size(); ++i) args[i] = const_cast<void*>(ctx.in(i));
            for (size_t r = 0; r < rets.size(); ++r) rets[r] = ctx.out(r);
            // An aliased result starts as its operand, and the handler sees
            // one buffer for both, as on XLA.
            for (const auto& [result, operand] : aliases) {
              if (rets[result] != args[operand] && ret_bytes[result] > 0) {
                kernels::CopyBytes(rets[result], args[operand], ret_bytes[result]);
              }
              args[operand] = rets[result];
            }
            const ExecutionEnv& env = ctx.env();
            ffi::InvokeInfo info{env.device_ordinal, env.run_id, env.ffi_user_data};
            return call->Execute(std::span<void* const>(args.data(), args.size()),
                                 std::span<void* const>(rets.data(), rets.size()), info);
          },
          {}, {}, /*foldable=*/false));
  std::vector<Node>& nodes = lowering.graph().nodes;
  if (nodes.size() > before && nodes.back().outputs == outputs) {
    Node& node = nodes.back();
    node.side_effects_run_inline = true;
    // An aliased result may take over its operand's memory where the
    // operand dies here (PlanBuffers decides); else the node copies it.
    if (!aliases.empty()) {
      node.output_over_input.assign(outputs.size(), -1);
      for (const auto& [result, operand] : aliases) {
        node.output_over_input[result] = static_cast<int32_t>(operand);
      }
    }
  }
  for (size_t r = 0; r < outputs.size(); ++r) {
    ValueId result = outputs[r];
    if (!ret_orders[r].empty()) {
      KILN_ASSIGN_OR_RETURN(result, EmitPermute(lowering, op, result, logical_rets[r],
                                                ret_orders[r], true));
    }
    lowering.Bind(op.result(r), result);
  }
  return true;
}

}  // namespace kiln::compiler
