;; Dot products of one query against every row of a matrix whose rows are held
;; either as float32 or as int8 codes with a float32 scale (vectors read from a
;; snapshot: a quarter of the memory, and nothing to convert at start-up).
;; 16 values per step in four f32x4 accumulators. Rows are padded to a multiple
;; of 16 values by the caller, with zeros. Build: node scripts/build-wasm.ts
;; (writes dot-scan-wasm.ts).
(module
  (memory (export "memory") 1)
  ;; For r < rows, by kinds[r] (one byte per row):
  ;;   1: scores[r] = dot(floats[r], query)
  ;;   2: scores[r] = dot(codes[r], query) * scales[r]
  ;;   else scores[r] = 0 (an empty row is never read)
  ;; stride = values per row (a multiple of 16); floats rows are stride*4 bytes, codes rows stride.
  (func (export "scan")
    (param $floats i32) (param $codes i32) (param $kinds i32) (param $scales i32)
    (param $rows i32) (param $stride i32) (param $query i32) (param $out i32)
    (local $r i32) (local $kind i32) (local $p i32) (local $q i32) (local $end i32) (local $score f32)
    (local $v v128) (local $half v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $a2 (v128.const i32x4 0 0 0 0))
        (local.set $a3 (v128.const i32x4 0 0 0 0))
        (local.set $q (local.get $query))
        (local.set $kind (i32.load8_u (i32.add (local.get $kinds) (local.get $r))))
        (if (i32.eq (local.get $kind) (i32.const 1))
          (then
            (local.set $p (i32.add (local.get $floats)
              (i32.shl (i32.mul (local.get $r) (local.get $stride)) (i32.const 2))))
            (local.set $end (i32.add (local.get $p) (i32.shl (local.get $stride) (i32.const 2))))
            (block $rowdone
              (loop $inner
                (br_if $rowdone (i32.ge_u (local.get $p) (local.get $end)))
                (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (v128.load (local.get $p)) (v128.load (local.get $q)))))
                (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (v128.load offset=16 (local.get $p)) (v128.load offset=16 (local.get $q)))))
                (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (v128.load offset=32 (local.get $p)) (v128.load offset=32 (local.get $q)))))
                (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (v128.load offset=48 (local.get $p)) (v128.load offset=48 (local.get $q)))))
                (local.set $p (i32.add (local.get $p) (i32.const 64)))
                (local.set $q (i32.add (local.get $q) (i32.const 64)))
                (br $inner)))))
        (if (i32.eq (local.get $kind) (i32.const 2))
          (then
            (local.set $p (i32.add (local.get $codes) (i32.mul (local.get $r) (local.get $stride))))
            (local.set $end (i32.add (local.get $p) (local.get $stride)))
            (block $rowdone
              (loop $inner
                (br_if $rowdone (i32.ge_u (local.get $p) (local.get $end)))
                (local.set $v (v128.load (local.get $p)))
                (local.set $half (i16x8.extend_low_i8x16_s (local.get $v)))
                (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul
                  (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $half))) (v128.load (local.get $q)))))
                (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul
                  (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $half))) (v128.load offset=16 (local.get $q)))))
                (local.set $half (i16x8.extend_high_i8x16_s (local.get $v)))
                (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul
                  (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $half))) (v128.load offset=32 (local.get $q)))))
                (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul
                  (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $half))) (v128.load offset=48 (local.get $q)))))
                (local.set $p (i32.add (local.get $p) (i32.const 16)))
                (local.set $q (i32.add (local.get $q) (i32.const 64)))
                (br $inner)))))
        (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
        (local.set $score
          (f32.add (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
                   (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (if (i32.eq (local.get $kind) (i32.const 2))
          (then (local.set $score (f32.mul (local.get $score)
            (f32.load (i32.add (local.get $scales) (i32.shl (local.get $r) (i32.const 2))))))))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))) (local.get $score))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $each))))
;; The sum of the squares of `length` int8 codes at `p` (a multiple of 16): a row's squared
  ;; norm, where the row has just been copied. At most 65,536 x 128^2 = 2^30: no i32 overflow.
  (func (export "squares") (param $p i32) (param $length i32) (result i32)
    (local $end i32) (local $half v128) (local $v v128) (local $sum v128)
    (local.set $end (i32.add (local.get $p) (local.get $length)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $v (v128.load (local.get $p)))
        (local.set $half (i16x8.extend_low_i8x16_s (local.get $v)))
        (local.set $sum (i32x4.add (local.get $sum) (i32x4.dot_i16x8_s (local.get $half) (local.get $half))))
        (local.set $half (i16x8.extend_high_i8x16_s (local.get $v)))
        (local.set $sum (i32x4.add (local.get $sum) (i32x4.dot_i16x8_s (local.get $half) (local.get $half))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $each)))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
      (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
)
