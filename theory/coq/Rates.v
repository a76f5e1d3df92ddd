(* Theorem 1's rate sentences (App. D, end of (D)), as explicit two-sided
   bounds and limits.  2 <= kappa, 2 kappa < n, x = n / kappa (> 2),
   nu = log2((n - kappa)/kappa), delta in (0, 1).
     necessary rate   Rnec = (1 - delta) nu - 1            ((C)(ii))
     sufficient rate  Rsuf = min(log2 n, log2 M), M = ceil(n/(2 delta kappa))
                      (any integer M with M - 1 < n/(2 delta kappa) <= M; (D))
   Explicit bounds: log2 x - 1 <= nu <= log2 x,
     (1 - delta) log2 x - 2 <= Rnec <= (1 - delta) log2 x - 1,
     log2 x - 1 <= Rsuf <= log2 x + log2((1 + delta)/(2 delta)),
   so both are Theta(log2(n/kappa)) for fixed delta; and for delta <= 1/2,
     |Rnec/nu - 1| <= delta + log2(1/delta)/nu,
     |Rsuf/nu - 1| <= 2 log2(1/delta)/nu,
   so both are (1 + o(1)) nu when delta -> 0 with log2(1/delta) = o(nu). *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat.
From VistaLab Require Import Entropy.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

Section Rates.
Variables n kappa : nat.
Hypothesis kappa_ge2 : (2 <= kappa)%N.
Hypothesis kappa_lt : (2 * kappa < n)%N.

Let kR : 2 <= INR kappa.
Proof. by have := le_INR 2 kappa (elimT leP kappa_ge2); rewrite /=; lra. Qed.

Let nk : 2 * INR kappa < INR n.
Proof. by rewrite -[2]/(INR 2) -mult_INR; apply: lt_INR; apply/ltP. Qed.

Definition xr := INR n / INR kappa.
Definition nur := log2 (INR (n - kappa) / INR kappa).

Lemma xr_gt2 : 2 < xr.
Proof.
rewrite /xr; apply: (Rmult_lt_reg_r (INR kappa)); first lra.
by rewrite /Rdiv Rmult_assoc Rinv_l; lra.
Qed.

Lemma xr_le_n : xr <= INR n.
Proof.
rewrite /xr; apply: (Rmult_le_reg_r (INR kappa)); first lra.
rewrite /Rdiv Rmult_assoc Rinv_l; last lra.
have : 0 <= INR n by apply: pos_INR.
nra.
Qed.

Lemma nur_eq : nur = log2 (xr - 1).
Proof.
rewrite /nur /xr minus_INR; last by apply/leP; apply: leq_trans (ltnW kappa_lt); rewrite mul2n -addnn leq_addl.
by congr log2; field; lra.
Qed.

Lemma nur_bounds : log2 xr - 1 <= nur <= log2 xr.
Proof.
have x2 := xr_gt2; rewrite nur_eq; split.
  have -> : log2 xr - 1 = log2 (xr / 2) by rewrite log2_div ?log2_2; lra.
  by apply: log2_le; lra.
by apply: log2_le; lra.
Qed.

Lemma log2_x_pos : 1 < log2 xr.
Proof. by rewrite -log2_2; apply: log2_lt; [lra | exact: xr_gt2]. Qed.

Variable delta : R.
Hypothesis delta_01 : 0 < delta < 1.
Definition Rnec := (1 - delta) * nur - 1.

Lemma Rnec_bounds : (1 - delta) * log2 xr - 2 <= Rnec <= (1 - delta) * log2 xr - 1.
Proof. by have := nur_bounds; rewrite /Rnec; nra. Qed.

(* For delta <= 1/2 the relative errors against nu. *)
Lemma nur_pos : 0 < nur.
Proof. by have [lo _] := nur_bounds; have := log2_x_pos; lra. Qed.

Lemma log2_inv_delta : delta <= / 2 -> 1 <= log2 (/ delta).
Proof.
move=> d2; rewrite -log2_2; apply: log2_le; first lra.
rewrite -(Rinv_inv 2); apply: Rinv_le_contravar; lra.
Qed.

Lemma Rnec_rel : delta <= / 2 ->
  Rabs (Rnec / nur - 1) <= delta + log2 (/ delta) / nur.
Proof.
move=> d2; have nu0 := nur_pos; have L1 := log2_inv_delta d2.
have -> : Rnec / nur - 1 = - (delta + / nur) by rewrite /Rnec; field; lra.
rewrite Rabs_Ropp Rabs_pos_eq; last by have := Rinv_0_lt_compat _ nu0; lra.
apply: Rplus_le_compat_l; rewrite /Rdiv -{1}(Rmult_1_l (/ nur)).
by apply: Rmult_le_compat_r; [left; apply: Rinv_0_lt_compat | ].
Qed.

Variable M : nat.
Hypothesis M_ceil : INR M - 1 < INR n / (2 * delta * INR kappa) <= INR M.

Definition Rsuf := Rmin (log2 (INR n)) (log2 (INR M)).


Let y_eq : INR n / (2 * delta * INR kappa) = xr / (2 * delta).
Proof. by rewrite /xr; field; lra. Qed.

Let M_pos : 0 < INR M.
Proof. have x2 := xr_gt2; have mc := M_ceil; rewrite y_eq in mc; have : 0 < xr / (2 * delta); last lra.
by apply: Rdiv_lt_0_compat; lra. Qed.

Lemma log2M_lower : log2 xr + log2 (/ delta) - 1 <= log2 (INR M).
Proof.
have x2 := xr_gt2; have mc := M_ceil; rewrite y_eq in mc.
have e : log2 xr + log2 (/ delta) - 1 = log2 (xr / (2 * delta)).
  rewrite log2_div; try lra; rewrite log2_mul; try lra; rewrite log2_inv; try lra.
  by rewrite log2_2; ring.
rewrite e; apply: log2_le; last lra.
by apply: Rdiv_lt_0_compat; lra.
Qed.

Lemma log2M_upper : log2 (INR M) <= log2 xr + log2 ((1 + delta) / (2 * delta)).
Proof.
have x2 := xr_gt2; have mc := M_ceil; rewrite y_eq in mc.
rewrite -log2_mul; try lra; last by apply: Rdiv_lt_0_compat; lra.
apply: log2_le => //.
have : xr / (2 * delta) + 1 <= xr * ((1 + delta) / (2 * delta)).
  have e : xr * ((1 + delta) / (2 * delta)) = xr / (2 * delta) + xr / 2 by field; lra.
  rewrite e; lra.
lra.
Qed.

Lemma Rsuf_bounds : log2 xr - 1 <= Rsuf <= log2 xr + log2 ((1 + delta) / (2 * delta)).
Proof.
have x2 := xr_gt2.
have ld : 0 <= log2 (/ delta).
  rewrite -log2_1; apply: log2_le; first lra.
  rewrite -Rinv_1; apply: Rinv_le_contravar; lra.
have ln : log2 xr <= log2 (INR n) by apply: log2_le; [lra | exact: xr_le_n].
have lo := log2M_lower; have up := log2M_upper.
rewrite /Rsuf /Rmin; case: Rle_dec => h; split; lra.
Qed.

Lemma Rsuf_rel : delta <= / 2 ->
  Rabs (Rsuf / nur - 1) <= 2 * (log2 (/ delta) / nur).
Proof.
move=> d2; have nu0 := nur_pos; have L1 := log2_inv_delta d2.
have x2 := xr_gt2; have [nlo nup] := nur_bounds.
have ln : log2 xr <= log2 (INR n) by apply: log2_le; [lra | exact: xr_le_n].
have lo := log2M_lower; have up := log2M_upper.
have eC : log2 ((1 + delta) / (2 * delta)) = log2 ((1 + delta) / 2) + log2 (/ delta).
  rewrite -log2_mul; try lra; last by apply: Rinv_0_lt_compat; lra.
  by congr log2; field; lra.
have C0 : log2 ((1 + delta) / 2) <= 0 by apply: log2_le0; lra.
have [r1 r2] : nur - 1 <= Rsuf <= nur + 1 + log2 (/ delta).
  by rewrite /Rsuf /Rmin; case: Rle_dec => h; split; lra.
have -> : Rsuf / nur - 1 = (Rsuf - nur) / nur by field; lra.
rewrite /Rdiv Rabs_mult Rabs_inv (Rabs_pos_eq nur); last lra.
have -> : 2 * (log2 (/ delta) / nur) = (2 * log2 (/ delta)) / nur by field; lra.
apply: Rmult_le_compat_r; first by left; apply: Rinv_0_lt_compat.
by apply: Rabs_le; lra.
Qed.

End Rates.

(* "this sufficient rate and the necessary rate (1 - delta) nu - 1 are both
   Theta(log2(n/kappa))": constants c1, c2 > 0 and a threshold t0 (all
   depending on delta only) with c1 log2(n/kappa) <= rate <= c2 log2(n/kappa)
   whenever log2(n/kappa) >= t0. *)
Theorem rates_theta (delta : R) : 0 < delta < 1 ->
  exists c1 c2 t0 : R, 0 < c1 /\ 0 < c2 /\
    forall n kappa M : nat, (2 <= kappa)%N -> (2 * kappa < n)%N ->
      INR M - 1 < INR n / (2 * delta * INR kappa) <= INR M ->
      t0 <= log2 (xr n kappa) ->
      (c1 * log2 (xr n kappa) <= Rnec n kappa delta <= c2 * log2 (xr n kappa)) /\
      (c1 * log2 (xr n kappa) <= Rsuf n M <= c2 * log2 (xr n kappa)).
Proof.
move=> d01.
set C := log2 ((1 + delta) / (2 * delta)).
have C0 : 0 <= C.
  rewrite /C -log2_1; apply: log2_le; first lra.
  apply: (Rmult_le_reg_r (2 * delta)); first lra.
  by rewrite /Rdiv Rmult_assoc Rinv_l; lra.
have q0 : 0 < 4 / (1 - delta) by apply: Rdiv_lt_0_compat; lra.
exists ((1 - delta) / 2), 2, (4 / (1 - delta) + 2 + C); split; first lra.
split; first lra.
move=> n kappa M k2 kn Mc t0.
have [a1 a2] := Rnec_bounds k2 kn d01.
have [b1 b2] := Rsuf_bounds k2 kn d01 Mc.
rewrite -/C in b1 b2.
move: t0 a1 a2 b1 b2; move: (log2 (xr n kappa)) => L t0 a1 a2 b1 b2.
have L4 : 4 <= (1 - delta) * L.
  have : (1 - delta) * (4 / (1 - delta)) <= (1 - delta) * L.
    by apply: Rmult_le_compat_l; lra.
  have -> : (1 - delta) * (4 / (1 - delta)) = 4 by field; lra.
  lra.
have L2 : 2 <= L by lra.
have LC : C <= L by lra.
have e : (1 - delta) / 2 * L = ((1 - delta) * L) / 2 by field.
have dL : (1 - delta) * L <= L by nra.
rewrite e; split; split; lra.
Qed.

(* "If instead delta_n -> 0 with log2(1/delta_n) = o(nu), both rates are
   (1 + o(1)) nu": along any sequence of instances, Rnec/nu -> 1 and
   Rsuf/nu -> 1. *)
Theorem rates_matching (n kappa M : nat -> nat) (delta : nat -> R) :
  (forall i, 2 <= kappa i)%N -> (forall i, 2 * kappa i < n i)%N ->
  (forall i, 0 < delta i < 1) ->
  (forall i, INR (M i) - 1 < INR (n i) / (2 * delta i * INR (kappa i)) <= INR (M i)) ->
  Un_cv delta 0 -> Un_cv (fun i => log2 (/ delta i) / nur (n i) (kappa i)) 0 ->
  Un_cv (fun i => Rnec (n i) (kappa i) (delta i) / nur (n i) (kappa i)) 1 /\
  Un_cv (fun i => Rsuf (n i) (M i) / nur (n i) (kappa i)) 1.
Proof.
move=> k2 kn d01 Mc dz rz.
have key : forall eps, 0 < eps -> exists N, forall i, (i >= N)%coq_nat ->
    delta i <= / 2 /\ delta i < eps / 2 /\ log2 (/ delta i) / nur (n i) (kappa i) < eps / 2.
  move=> eps e0.
  have h2p : 0 < / 2 by apply: Rinv_0_lt_compat; lra.
  have e2 : 0 < eps / 2 by lra.
  have [N1 h1] := dz (Rmin (/ 2) (eps / 2)) (Rmin_pos _ _ h2p e2).
  have [N2 h2] := rz (eps / 2) e2.
  exists (Nat.max N1 N2) => i ii.
  have i1 : (i >= N1)%coq_nat by apply: Nat.le_trans ii; apply: Nat.le_max_l.
  have i2 : (i >= N2)%coq_nat by apply: Nat.le_trans ii; apply: Nat.le_max_r.
  have := h1 i i1; have := h2 i i2; rewrite /R_dist !Rminus_0_r.
  move=> /Rabs_def2 [r2 _] /Rabs_def2 [d2 _].
  have := Rmin_l (/ 2) (eps / 2); have := Rmin_r (/ 2) (eps / 2); lra.
split=> eps e0; have [N hN] := key eps e0; exists N => i ii;
  have [d2 [de re]] := hN i ii; rewrite /R_dist.
  have := Rnec_rel (k2 i) (kn i) (d01 i) d2; lra.
have := Rsuf_rel (k2 i) (kn i) (d01 i) (Mc i) d2; lra.
Qed.
