(* Proposition 2 (content channel), for a finite observation alphabet W.
   J* is uniform on [n] and, given J* = j, W has law P_j.  We prove
     I(J*; W) = 1/(n ln 2) sum_j KL(P_j || Pbar)                (Step 1)
     I(J*; W) <= 1/(n ln 2) sum_j KL(P_j || Q)   for every Q     (tight route)
     I(J*; W) <= 1/(n^2 ln 2) sum_j sum_k KL(P_j || P_k)        (Step 1, Jensen)
   with KL in nats, mutual information in bits.  The paper's Gaussian channel
   is continuous and is NOT formalised here: what is proved is the finite-
   channel statement with a "<=" premise on the pairwise divergences,
     KL(P_j || P_k) <= (ln kappa)^2 / sigma^2   (j <> k)
   (a NAMED HYPOTHESIS of prop2_content, not an axiom), from which Step 3
   gives I <= (log2 kappa)^2 ln 2 / sigma^2.  The Gaussian value is an
   equality for the continuous channel; every finite quantisation has a
   smaller divergence (data processing, proved in MeasObs.v for every
   channel given by its likelihood ratios), so the "<=" premise is the one a
   quantised Gaussian channel meets. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop finfun.
From VistaLab Require Import Entropy.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

(* Kullback-Leibler divergence in nats. *)
Definition KL (W : finType) (p q : W -> R) : R := \sum_w p w * ln (p w / q w).

Section Prop2.
Variable n : nat.
Hypothesis n_pos : (0 < n)%N.
Variable W : finType.
Variable P : 'I_n -> W -> R.
Hypothesis P_dist : forall j, is_dist (P j).

(* Joint law of (J*, W) with J* uniform. *)
Definition pJW (j : 'I_n) (w : W) := / INR n * P j w.

(* The mixture Pbar = (1/n) sum_k P_k. *)
Definition Pbar (w : W) := / INR n * \sum_k P k w.

Let nR : 0 < INR n.
Proof. by apply: lt_0_INR; apply/ltP. Qed.

Lemma P_ge0 j w : 0 <= P j w.
Proof. exact: (P_dist j).1. Qed.

Lemma pJW_joint : is_joint pJW.
Proof.
split=> [j w|]; first by apply: Rmult_le_pos; [left; apply: Rinv_0_lt_compat | exact: P_ge0].
rewrite (eq_bigr (fun _ => / INR n)); last by move=> j _; rewrite sumR_scal (P_dist j).2; ring.
by rewrite sumR_constT card_ord Rinv_r //; lra.
Qed.

Lemma marg2_pJW w : marg2 pJW w = Pbar w.
Proof. by rewrite /marg2 /Pbar /pJW sumR_scal. Qed.

Lemma marg1_pJW j : marg1 pJW j = / INR n.
Proof. by rewrite /marg1 /pJW sumR_scal (P_dist j).2; ring. Qed.

Lemma Pbar_pos j w : 0 < P j w -> 0 < Pbar w.
Proof.
move=> h; rewrite /Pbar; apply: Rmult_lt_0_compat; first exact: Rinv_0_lt_compat.
apply: (Rlt_le_trans _ (P j w)) => //; apply: leR_sum_term => k; exact: P_ge0.
Qed.

Lemma Pbar_dist : is_dist Pbar.
Proof.
have := marg2_dist pJW_joint; case=> h s.
by split=> [w|]; [rewrite -marg2_pJW | rewrite -s; apply: eq_bigr => w _; rewrite marg2_pJW].
Qed.

(* Step 1: I(J*; W) = 1/(n ln 2) sum_j KL(P_j || Pbar). *)
Theorem MI_mixture_KL : MI pJW = / (INR n * ln 2) * \sum_j KL (P j) Pbar.
Proof.
have l2 := ln2_pos.
have n0 : (0 < #|'I_n|)%N by rewrite card_ord.
rewrite /MI (H_ext (q' := fun _ => / INR #|'I_n|)); last by move=> j; rewrite marg1_pJW card_ord.
rewrite H_uniform // card_ord.
have term : forall w j, marg2 pJW w * (post pJW w j * log2 (post pJW w j))
    = / INR n * (P j w * ln (P j w / Pbar w)) / ln 2 - / INR n * P j w * log2 (INR n).
  move=> w j; rewrite -Rmult_assoc (marg2_post j w pJW_joint).
  rewrite /post marg2_pJW /pJW.
  case: (Req_dec (P j w) 0) => [->|nz].
    by rewrite !(Rmult_0_r, Rmult_0_l) /Rdiv !Rmult_0_l; ring.
  have pp : 0 < P j w by have := P_ge0 j w; lra.
  have bp := Pbar_pos pp.
  have -> : / INR n * P j w / Pbar w = (P j w / Pbar w) / INR n by field; lra.
  rewrite log2_div //; last exact: Rdiv_lt_0_compat.
  rewrite /log2; field; lra.
have -> : condH pJW = \sum_w \sum_j (/ INR n * P j w * log2 (INR n)
                          - / INR n * (P j w * ln (P j w / Pbar w)) / ln 2).
  rewrite /condH; apply: eq_bigr => w _; rewrite /H.
  have -> : forall a b : R, a * - b = - (a * b) by move=> *; ring.
  rewrite -sumR_scal -sumR_opp; apply: eq_bigr => j _; rewrite term; ring.
have eA : \sum_w \sum_j / INR n * P j w * log2 (INR n) = log2 (INR n).
  rewrite exchange_big /=.
  rewrite (eq_bigr (fun j => (\sum_w pJW j w) * log2 (INR n))); last first.
    by move=> j _; rewrite sumR_scar.
  by rewrite sumR_scar pJW_joint.2; ring.
have eB : \sum_w \sum_j / INR n * (P j w * ln (P j w / Pbar w)) / ln 2
          = / (INR n * ln 2) * \sum_j KL (P j) Pbar.
  rewrite exchange_big /= /KL -sumR_scal; apply: eq_bigr => j _.
  by rewrite -sumR_scal; apply: eq_bigr => w _; field; lra.
rewrite (eq_bigr (fun w => \sum_j / INR n * P j w * log2 (INR n)
            - \sum_j / INR n * (P j w * ln (P j w / Pbar w)) / ln 2)); last first.
  by move=> w _; rewrite sumR_sub.
rewrite sumR_sub eA eB; ring.
Qed.

(* KL(P || Q) - KL(P || Pbar) = sum P (ln Pbar - ln Q), termwise. *)
Lemma KL_shift j (Q : W -> R) :
  (forall w, 0 < Pbar w -> 0 < Q w) ->
  KL (P j) Q - KL (P j) Pbar = \sum_w P j w * (ln (Pbar w) - ln (Q w)).
Proof.
move=> QP; rewrite /KL -sumR_sub; apply: eq_bigr => w _.
case: (Req_dec (P j w) 0) => [->|nz]; first ring.
have pp : 0 < P j w by have := P_ge0 j w; lra.
have bp := Pbar_pos pp; have qp := QP w bp.
by rewrite !ln_div' //; ring.
Qed.

(* Tight route: I(J*; W) <= 1/(n ln 2) sum_j KL(P_j || Q) for every
   (sub-)probability Q whose support contains that of Pbar. *)
Theorem MI_le_KL_any (Q : W -> R) :
  (forall w, 0 <= Q w) -> \sum_w Q w <= 1 -> (forall w, 0 < Pbar w -> 0 < Q w) ->
  MI pJW <= / (INR n * ln 2) * \sum_j KL (P j) Q.
Proof.
move=> Q0 Q1 QP; have l2 := ln2_pos.
rewrite MI_mixture_KL.
have g := gibbs Pbar_dist Q0 QP Q1.
have e : \sum_j KL (P j) Q - \sum_j KL (P j) Pbar
         = INR n * ln 2 * (crossH Pbar Q - H Pbar).
  rewrite -sumR_sub (eq_bigr _ (fun j _ => KL_shift j QP)) exchange_big /=.
  have r : crossH Pbar Q - H Pbar
           = \sum_w Pbar w * (ln (Pbar w) - ln (Q w)) * / ln 2.
    rewrite /crossH /H.
    have -> : forall a b : R, - a - - b = b - a by move=> *; ring.
    by rewrite -sumR_sub; apply: eq_bigr => w _; rewrite /log2; field; lra.
  rewrite r -sumR_scal; apply: eq_bigr => w _.
  by rewrite sumR_scar /Pbar; field; lra.
have : 0 <= \sum_j KL (P j) Q - \sum_j KL (P j) Pbar.
  rewrite e; apply: Rmult_le_pos; [apply: Rmult_le_pos; lra | lra].
move=> h; apply: Rmult_le_compat_l; last lra.
by left; apply: Rinv_0_lt_compat; apply: Rmult_lt_0_compat.
Qed.

(* Pairwise form (the paper's Step 1 after Jensen), assuming the laws share
   their support (otherwise some KL(P_j || P_k) is infinite). *)
Hypothesis common_support : forall j k w, 0 < P j w -> 0 < P k w.

Theorem MI_le_pairwise_KL :
  MI pJW <= / (INR n ^ 2 * ln 2) * \sum_j \sum_k KL (P j) (P k).
Proof.
have l2 := ln2_pos.
have hk : forall k, MI pJW <= / (INR n * ln 2) * \sum_j KL (P j) (P k).
  move=> k; apply: MI_le_KL_any; [exact: P_ge0 | by rewrite (P_dist k).2; lra |].
  move=> w bp; case: (Rlt_le_dec 0 (P k w)) => // h.
  exfalso; have z : forall j, P j w = 0.
    move=> j; case: (Rlt_le_dec 0 (P j w)) => h2; last by have := P_ge0 j w; lra.
    by have := common_support k h2; lra.
  by move: bp; rewrite /Pbar big1 ?Rmult_0_r => [|j _]; [lra | exact: z].
rewrite exchange_big /=.
have : \sum_(k : 'I_n) MI pJW <= \sum_(k : 'I_n) / (INR n * ln 2) * \sum_j KL (P j) (P k).
  by apply: leR_sum => k _; exact: hk.
rewrite sumR_constT card_ord -sumR_scal => h.
have -> : / (INR n ^ 2 * ln 2) = / INR n * / (INR n * ln 2) by field; lra.
have -> : MI pJW = / INR n * (INR n * MI pJW) by field; lra.
rewrite [X in _ <= X](_ : _ = / INR n * \sum_k (/ (INR n * ln 2) * \sum_j KL (P j) (P k))).
  apply: Rmult_le_compat_l; last exact: h.
  by left; apply: Rinv_0_lt_compat.
rewrite -sumR_scal; apply: eq_bigr => k _.
by rewrite Rmult_assoc.
Qed.

Lemma KL_self j : KL (P j) (P j) = 0.
Proof.
rewrite /KL big1 // => w _; case: (Req_dec (P j w) 0) => [->|nz]; first ring.
by rewrite /Rdiv Rinv_r // ln_1; ring.
Qed.

(* Proposition 2, Steps 2-3, for a finite channel: if every pairwise
   divergence is at most the Gaussian value (ln kappa)^2 / sigma^2 (a
   premise), then I(J*; W) <= (1 - 1/n) (log2 kappa)^2 ln 2 / sigma^2 bits
   (the n(n-1)/n^2 of Step 3 kept). *)
Theorem prop2_content_tight (kappa sigma : R) :
  0 < sigma ->
  (forall j k, j <> k -> KL (P j) (P k) <= (ln kappa) ^ 2 / sigma ^ 2) ->
  MI pJW <= (1 - / INR n) * ((log2 kappa) ^ 2 / sigma ^ 2 * ln 2).
Proof.
move=> s0 gauss; have l2 := ln2_pos.
set c := (ln kappa) ^ 2 / sigma ^ 2.
have c0 : 0 <= c.
  by rewrite /c /Rdiv; apply: Rmult_le_pos; [apply: pow2_ge_0 | left; apply: Rinv_0_lt_compat; nra].
have row : forall j, \sum_k KL (P j) (P k) <= (INR n - 1) * c.
  move=> j; rewrite (bigD1 j) //= KL_self Rplus_0_l.
  apply: (Rle_trans _ (\sum_(k | k != j) c)).
    by apply: leR_sum => k /eqP ne; apply: gauss => e; apply: ne.
  rewrite sumR_const cardC1 card_ord; apply: Req_le.
  by case: (n) n_pos => // m _; rewrite -pred_Sn S_INR; ring.
apply: (Rle_trans _ _ _ MI_le_pairwise_KL).
apply: (Rle_trans _ (/ (INR n ^ 2 * ln 2) * \sum_(j : 'I_n) ((INR n - 1) * c))).
  apply: Rmult_le_compat_l.
    by left; apply: Rinv_0_lt_compat; apply: Rmult_lt_0_compat => //; apply: pow_lt; exact: nR.
  by apply: leR_sum => j _; exact: row.
rewrite sumR_constT card_ord.
have -> : (log2 kappa) ^ 2 / sigma ^ 2 * ln 2 = c / ln 2.
  by rewrite /c /log2; field; lra.
have -> : / (INR n ^ 2 * ln 2) * (INR n * ((INR n - 1) * c))
          = (1 - / INR n) * (c / ln 2) by field; lra.
by right.
Qed.

(* The paper's form: I(J*; W) <= (log2 kappa)^2 ln 2 / sigma^2 bits. *)
Theorem prop2_content (kappa sigma : R) :
  0 < sigma ->
  (forall j k, j <> k -> KL (P j) (P k) <= (ln kappa) ^ 2 / sigma ^ 2) ->
  MI pJW <= (log2 kappa) ^ 2 / sigma ^ 2 * ln 2.
Proof.
move=> s0 gauss; have l2 := ln2_pos.
apply: (Rle_trans _ _ _ (prop2_content_tight s0 gauss)).
have c0 : 0 <= (log2 kappa) ^ 2 / sigma ^ 2 * ln 2.
  apply: Rmult_le_pos; last lra.
  by rewrite /Rdiv; apply: Rmult_le_pos; [apply: pow2_ge_0 | left; apply: Rinv_0_lt_compat; nra].
have : 0 < / INR n by apply: Rinv_0_lt_compat.
nra.
Qed.

(* Tight variant: with Q the Gaussian centred at the mixture mean, the closed
   form KL(P_j || Q) = (1 - 1/n) (ln kappa)^2 / (2 sigma^2), a finite channel
   with KL(P_j || Q) at most that value for every j (a NAMED PREMISE,
   gaussian_kl_Q) has
   I <= (1 - 1/n) ln 2 (log2 kappa)^2 / (2 sigma^2), a factor 2n/(n-1) below
   Proposition 2's bound. *)
Theorem prop2_tight_gaussian (Q : W -> R) (kappa sigma : R) :
  0 < sigma -> (forall w, 0 <= Q w) -> \sum_w Q w <= 1 -> (forall w, 0 < Pbar w -> 0 < Q w) ->
  (forall j, KL (P j) Q <= (1 - / INR n) * (ln kappa) ^ 2 / (2 * sigma ^ 2)) ->
  MI pJW <= (1 - / INR n) * ln 2 * (log2 kappa) ^ 2 / (2 * sigma ^ 2).
Proof.
move=> s0 Q0 Q1 QP gk; have l2 := ln2_pos.
apply: (Rle_trans _ _ _ (MI_le_KL_any Q0 Q1 QP)).
apply: (Rle_trans _ (/ (INR n * ln 2) *
          \sum_(j : 'I_n) ((1 - / INR n) * (ln kappa) ^ 2 / (2 * sigma ^ 2)))).
  apply: Rmult_le_compat_l.
    by left; apply: Rinv_0_lt_compat; apply: Rmult_lt_0_compat => //; exact: nR.
  by apply: leR_sum => j _; exact: gk.
rewrite sumR_constT card_ord.
have s2 : sigma ^ 2 <> 0 by apply: pow_nonzero; lra.
by apply: Req_le; rewrite /log2; field; repeat split; lra.
Qed.

End Prop2.
