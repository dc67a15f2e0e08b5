// expected-error: 2:61: expected one of 'offset_dims', 'collapsed_slice_dims', 'operand_batching_dims', 'start_indices_batching_dims', 'start_index_map', 'index_vector_dim' in '#stablehlo.gather', found 'slice_sizes'
module attributes {g = #stablehlo.gather<offset_dims = [1], slice_sizes = [2]>} {
}
