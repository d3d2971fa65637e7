;; Dot products of one query against every row of a matrix, 16 floats per
;; step in four f32x4 accumulators. Rows are padded to a multiple of 16 floats
;; by the caller. Build: node scripts/build-wasm.ts (writes dot-scan-wasm.ts).
(module
  (memory (export "memory") 1)
  ;; scores[r] = dot(data[r], query) for r < rows; stride = dims padded to 16 floats
  (func (export "scan") (param $data i32) (param $rows i32) (param $stride i32) (param $query i32) (param $out i32)
    (local $r i32) (local $p i32) (local $q i32) (local $end i32) (local $rowBytes i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $rowBytes (i32.shl (local.get $stride) (i32.const 2)))
    (local.set $p (local.get $data))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $a2 (v128.const i32x4 0 0 0 0))
        (local.set $a3 (v128.const i32x4 0 0 0 0))
        (local.set $q (local.get $query))
        (local.set $end (i32.add (local.get $p) (local.get $rowBytes)))
        (block $rowdone
          (loop $inner
            (br_if $rowdone (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (v128.load (local.get $p)) (v128.load (local.get $q)))))
            (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (v128.load offset=16 (local.get $p)) (v128.load offset=16 (local.get $q)))))
            (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (v128.load offset=32 (local.get $p)) (v128.load offset=32 (local.get $q)))))
            (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (v128.load offset=48 (local.get $p)) (v128.load offset=48 (local.get $q)))))
            (local.set $p (i32.add (local.get $p) (i32.const 64)))
            (local.set $q (i32.add (local.get $q) (i32.const 64)))
            (br $inner)))
        (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32.add (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
                   (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rows))))
)
