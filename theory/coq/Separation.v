(* Proposition 1, asymptotic separation (paper, Appendix B, paragraph
   "Asymptotic separation").  Handle cost c0 N log2 N (constant c0 >= 0),
   k = ceil(sqrt N) bits per block and budget B = c N log2 N with c > c0:
     (i)  the recovering method stays feasible for all large N:
          c0 N log2 N + s0 + k <= B eventually, for any fixed instruction
          size s0 >= 0 (s0 = 0 is the paper's condition B >= c0 N log2 N + k);
     (ii) the lossy bound B/(Nk) + 1/k tends to 0 as N -> oo.
   Route for (ii): ln x < x for x > 0, at x = N^(1/4) = sqrt (sqrt N), gives
   ln N < 4 N^(1/4), so B/(Nk) + 1/k <= (c log2 N + 1)/sqrt N
   <= (4 c / ln 2 + 1) / N^(1/4).
   ceil(sqrt N) is computed on nat as 1 + floor(sqrt(N - 1)) (0 at N = 0);
   ceil_sqrt_spec shows it is the ceiling: k - 1 < sqrt N <= k. *)

From Coq Require Import Reals Lra PeanoNat.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat.
From VistaLab Require Import Entropy.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

(* ---------------------------------------------------------------------- *)
(* k = ceil(sqrt N). *)
Definition ceil_sqrt (N : nat) : nat :=
  if N is n.+1 then (Nat.sqrt n).+1 else 0%N.

Lemma ceil_sqrt_spec (N : nat) :
  INR (ceil_sqrt N) - 1 < sqrt (INR N) <= INR (ceil_sqrt N).
Proof.
case: N => [|n]; first by rewrite /= sqrt_0; lra.
rewrite /ceil_sqrt.
have [lo hi] := Nat.sqrt_spec n (Nat.le_0_l n).
set s := Nat.sqrt n in lo hi *.
have loR : INR s * INR s <= INR n by rewrite -mult_INR; apply: le_INR.
have hiR : INR n.+1 <= INR s.+1 * INR s.+1 by rewrite -mult_INR; apply: le_INR.
have s0 : 0 <= INR s by apply: pos_INR.
rewrite !S_INR in hiR *.
split.
  rewrite (_ : INR s + 1 - 1 = sqrt (INR s * INR s)); last by rewrite sqrt_square //; ring.
  by apply: sqrt_lt_1_alt; split; [nra | lra].
rewrite -(sqrt_square (INR s + 1)); last lra.
exact: sqrt_le_1_alt.
Qed.

Lemma ceil_sqrt_pos (N : nat) : (0 < N)%N -> (0 < ceil_sqrt N)%N.
Proof. by case: N. Qed.

(* ---------------------------------------------------------------------- *)
(* Real-analysis facts. *)

(* Some N exceeds any real A. *)
Lemma nat_above (A : R) : exists N : nat, A < INR N /\ (0 < N)%N.
Proof.
case: (Rle_lt_dec A 0) => [A0 | A0].
  by exists 1%N; split => //; rewrite /=; lra.
have [N [h N0]] := archimed_cor1 (/ A) (Rinv_0_lt_compat A A0).
have NR : 0 < INR N by apply: lt_0_INR.
exists N; split; last by apply/ltP.
rewrite -(Rinv_inv A) -(Rinv_inv (INR N)).
by apply: Rinv_lt_contravar => //; apply: Rmult_lt_0_compat; apply: Rinv_0_lt_compat.
Qed.

Lemma ln_lt_self (x : R) : 0 < x -> ln x < x.
Proof.
move=> x0; rewrite -{2}(ln_exp x).
apply: ln_increasing => //.
have := exp_ineq1_le x; lra.
Qed.

(* x^(1/4) as sqrt (sqrt x): ln x < 4 x^(1/4). *)
Lemma ln_lt_4_root4 (x : R) : 0 < x -> ln x < 4 * sqrt (sqrt x).
Proof.
move=> x0.
have r0 : 0 < sqrt x by apply: sqrt_lt_R0.
have q0 : 0 < sqrt (sqrt x) by apply: sqrt_lt_R0.
have ex : x = (sqrt (sqrt x) * sqrt (sqrt x)) * (sqrt (sqrt x) * sqrt (sqrt x)).
  by rewrite sqrt_sqrt ?sqrt_sqrt //; lra.
rewrite {1}ex !ln_mult //; try by apply: Rmult_lt_0_compat.
have := ln_lt_self q0; lra.
Qed.

Lemma log2_ge1 (x : R) : 2 <= x -> 1 <= log2 x.
Proof. by move=> x2; rewrite -log2_2; apply: log2_le => //; lra. Qed.

Lemma log2_ge0 (x : R) : 1 <= x -> 0 <= log2 x.
Proof. by move=> x1; rewrite -log2_1; apply: log2_le => //; lra. Qed.

(* ---------------------------------------------------------------------- *)
(* (i) Feasibility for all large N. *)
Theorem separation_feasible (c0 c s0 : R) :
  0 <= c0 < c -> 0 <= s0 ->
  exists N0 : nat, forall N : nat, (N0 <= N)%N ->
    c0 * INR N * log2 (INR N) + s0 + INR (ceil_sqrt N) <= c * INR N * log2 (INR N).
Proof.
move=> [c00 cc0] s00.
set d := c - c0.
have d0 : 0 < d by rewrite /d; lra.
have [N0 [hN0 _]] := nat_above (2 + 2 * (s0 + 1) / d + (2 / d) * (2 / d)).
exists N0 => N NN0.
set n := INR N.
have nN0 : INR N0 <= n by apply: le_INR; apply/leP.
have t1 : 0 <= 2 * (s0 + 1) / d by apply: Rmult_le_pos; [lra | left; apply: Rinv_0_lt_compat].
have t2 : 0 <= (2 / d) * (2 / d) by apply: Rle_0_sqr.
have n2 : 2 <= n by lra.
have l1 := log2_ge1 n2.
(* sqrt n >= 2/d *)
have sq : 2 / d <= sqrt n.
  have p : 0 <= 2 / d by left; apply: Rdiv_lt_0_compat; lra.
  rewrite -(sqrt_square (2 / d)) //; apply: sqrt_le_1_alt; lra.
have ss : sqrt n * sqrt n = n by apply: sqrt_sqrt; lra.
have [kup _] := ceil_sqrt_spec N; rewrite -/n in kup.
(* d n / 2 >= s0 + 1 and d n / 2 >= sqrt n *)
have h1 : s0 + 1 <= d * n / 2.
  have e : 2 * (s0 + 1) / d * d = 2 * (s0 + 1) by field; lra.
  have : 2 * (s0 + 1) / d * d <= n * d by apply: Rmult_le_compat_r; lra.
  lra.
have h2 : sqrt n <= d * n / 2.
  have e : 2 / d * d = 2 by field; lra.
  have : 2 / d * d * sqrt n <= sqrt n * d * sqrt n.
    apply: Rmult_le_compat_r; first exact: sqrt_pos.
    apply: Rmult_le_compat_r; lra.
  rewrite e; nra.
have h3 : d * n <= d * n * log2 n.
  have : d * n * 1 <= d * n * log2 n by apply: Rmult_le_compat_l; nra.
  lra.
rewrite /d in h1 h2 h3; nra.
Qed.

(* (ii) The lossy bound B/(Nk) + 1/k tends to 0. *)
Theorem separation_lossy_vanishes (c : R) :
  0 <= c ->
  Un_cv (fun N : nat => c * INR N * log2 (INR N) / (INR N * INR (ceil_sqrt N))
                        + / INR (ceil_sqrt N)) 0.
Proof.
move=> c0 eps eps0.
have l2 := ln2_pos.
set C := 4 * c / ln 2 + 1.
have C0 : 0 < C.
  rewrite /C; have : 0 <= 4 * c / ln 2 by apply: Rmult_le_pos; [lra | left; apply: Rinv_0_lt_compat].
  lra.
have [N0 [hN0 N00]] := nat_above ((C / eps) ^ 4).
exists N0 => N NN0.
have N0R : 1 <= INR N0 by have := le_INR 1 N0 (ltP N00).
set n := INR N.
have nN0 : INR N0 <= n by apply: le_INR; exact: NN0.
have n1 : 1 <= n by lra.
have [klo kup] := ceil_sqrt_spec N; rewrite -/n in klo kup.
set k := INR (ceil_sqrt N) in klo kup *.
set q := sqrt (sqrt n).
have s1 : 1 <= sqrt n by rewrite -sqrt_1; apply: sqrt_le_1_alt.
have q1 : 1 <= q by rewrite /q -sqrt_1; apply: sqrt_le_1_alt.
have ss : sqrt n * sqrt n = n by apply: sqrt_sqrt; lra.
have qq : q * q = sqrt n by rewrite /q; apply: sqrt_sqrt; lra.
have k0 : 0 < k by lra.
have lg0 : 0 <= log2 n by apply: log2_ge0.
have lnq : ln n < 4 * q by apply: ln_lt_4_root4; lra.
(* the bound equals (c log2 n + 1) / k *)
have e : c * n * log2 n / (n * k) + / k = (c * log2 n + 1) / k by field; lra.
rewrite /R_dist Rminus_0_r e Rabs_pos_eq; last first.
  by apply: Rmult_le_pos; [nra | left; apply: Rinv_0_lt_compat].
(* c log2 n <= 4 c q / ln 2 *)
have clog : c * log2 n <= 4 * c / ln 2 * q.
  have e3 : 4 * c / ln 2 * q = c * ((4 * q) / ln 2) by field; lra.
  rewrite e3 /log2; apply: Rmult_le_compat_l => //.
  apply: Rmult_le_compat_r; [by left; apply: Rinv_0_lt_compat | lra].
(* (c log2 n + 1)/k <= C q / (q q) = C / q *)
have step : (c * log2 n + 1) / k <= C / q.
  apply: (Rmult_le_reg_r k) => //.
  rewrite /Rdiv Rmult_assoc Rinv_l; last lra.
  have cq : c * log2 n + 1 <= C * q by rewrite /C; nra.
  have : C * q <= C / q * k.
    rewrite -qq in kup.
    have e2 : C / q * (q * q) = C * q by field; lra.
    rewrite -e2; apply: Rmult_le_compat_l => //.
    by left; apply: Rdiv_lt_0_compat; lra.
  lra.
apply: (Rle_lt_trans _ _ _ step).
(* q > C / eps because q^4 = n > (C/eps)^4 *)
have qbig : C / eps < q.
  apply: Rnot_le_lt => qle.
  have p : 0 <= q <= C / eps by lra.
  have := pow_incr _ _ 4 p.
  have -> : q ^ 4 = n by rewrite -ss -qq; ring.
  lra.
apply: (Rmult_lt_reg_r q); first lra.
rewrite /Rdiv Rmult_assoc Rinv_l; last lra.
have : C / eps * eps < q * eps by apply: Rmult_lt_compat_r.
have -> : C / eps * eps = C by field; lra.
lra.
Qed.

(* The rate: B/(Nk) + 1/k = Theta(log N / sqrt N), with explicit constants
   c/2 and c + 1 for every N >= 2. *)
Theorem separation_rate (c : R) (N : nat) :
  0 < c -> (2 <= N)%N ->
  let k := INR (ceil_sqrt N) in
  let B := c * INR N * log2 (INR N) in
  c / 2 * log2 (INR N) / sqrt (INR N) <= B / (INR N * k) + / k <= (c + 1) * log2 (INR N) / sqrt (INR N).
Proof.
move=> c0 N2 k B.
set n := INR N.
have n2 : 2 <= n by rewrite /n; have := le_INR 2 N (elimT leP N2); rewrite /=; lra.
have [klo kup] := ceil_sqrt_spec N; rewrite -/n -/k in klo kup.
have s1 : 1 <= sqrt n by rewrite -sqrt_1; apply: sqrt_le_1_alt; lra.
have k0 : 0 < k by lra.
have l1 := log2_ge1 n2.
have e : B / (n * k) + / k = (c * log2 n + 1) / k by rewrite /B -/n; field; lra.
rewrite e; split.
  (* c/2 log2 n / sqrt n <= c log2 n / (sqrt n + 1) <= (c log2 n + 1) / k *)
  apply: (Rmult_le_reg_r (sqrt n * k)); first nra.
  have e1 : c / 2 * log2 n / sqrt n * (sqrt n * k) = c / 2 * log2 n * k by field; lra.
  have e2 : (c * log2 n + 1) / k * (sqrt n * k) = (c * log2 n + 1) * sqrt n by field; lra.
  rewrite e1 e2.
  have cl : 0 <= c / 2 * log2 n by apply: Rmult_le_pos; lra.
  have : c / 2 * log2 n * k <= c / 2 * log2 n * (2 * sqrt n).
    by apply: Rmult_le_compat_l => //; lra.
  nra.
apply: (Rmult_le_reg_r (sqrt n * k)); first nra.
have e1 : (c * log2 n + 1) / k * (sqrt n * k) = (c * log2 n + 1) * sqrt n by field; lra.
have e2 : (c + 1) * log2 n / sqrt n * (sqrt n * k) = (c + 1) * log2 n * k by field; lra.
rewrite e1 e2.
have a : (c * log2 n + 1) * sqrt n <= (c + 1) * log2 n * sqrt n.
  by apply: Rmult_le_compat_r; [exact: sqrt_pos | lra].
have : (c + 1) * log2 n * sqrt n <= (c + 1) * log2 n * k.
  by apply: Rmult_le_compat_l => //; apply: Rmult_le_pos; lra.
lra.
Qed.
