(* The tighter variant of Proposition 2 (paper App. C, "Proof of
   Proposition 2", the remark after Step 3) for the paper's Gaussian
   channel, with no premise about divergences.

   Contents:
   - prop2_meas_anyQ (any reference law Q): for an observation W in a
     measurable space with laws P_j given J* = j (J* uniform on [n]), and a
     probability measure Q with dQ/dP_j = exp(-Lq_j) for every j (Lq_j
     P_j-integrable):
       I(J*; W) <= 1/(n ln 2) sum_j E_{P_j}[Lq_j]   (bits).
     Proof: for each finite measurable quantisation q, MI_le_KL_any (Prop2.v)
     with the reference law t |-> Q(q^-1 t) (positive on every cell of
     positive mixture probability, cell_pos), then data processing
     (kl_quantised_le, MeasObs.v) on each KL(q#P_j || q#Q).
   - prop2_gaussian_tight: for the channel of GaussN.v (gauss_chan: given
     J* = j the n coordinates are independent, W_j ~ N(ln L, sigma^2),
     W_i ~ N(ln l, sigma^2) for i <> j), take Q the product law with every
     mean equal to mbar = (ln L + (n - 1) ln l) / n (gauss_mix).  Then
     E_{P_j}[Lq_j] = sum_i (m_i^(j) - mbar)^2 / (2 sigma^2)
                   = (1 - 1/n) (ln kappa)^2 / (2 sigma^2),  kappa = L / l,
     (coordinate j contributes a^2 (1 - 1/n)^2, each of the n - 1 others
     a^2 / n^2, a = ln L - ln l), so
       I(J*; W) <= (1 - 1/n) ln 2 (log2 kappa)^2 / (2 sigma^2)   (bits),
     a factor 2 below prop2_gaussian (GaussN.v).  Premises: 0 < sigma,
     0 < n, 0 < l, 0 < L only.
   Uses mathcomp-analysis 0.6.0 over Coq's reals (Rstruct). *)

From Coq Require Import Reals Lra.
From mathcomp Require Import all_ssreflect all_algebra finmap.
From mathcomp Require Import boolp classical_sets functions cardinality mathcomp_extra.
From mathcomp Require Import reals ereal signed topology normedtype sequences esum measure lebesgue_measure lebesgue_integral numfun Rstruct.
From VistaLab Require Import Entropy GeneralObs Prop2 MeasObs Density GaussMeasure GaussN.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Import Order.TTheory GRing.Theory Num.Theory.

Local Open Scope classical_set_scope.
Local Open Scope ring_scope.

Section AnyQ.
Context d (X : measurableType d) (n : nat).
Variable P : 'I_n -> {measure set X -> \bar real_realType}.
Hypothesis P1 : forall j, P j setT = 1%E.
Hypothesis n0 : (0 < n)%N.
Variable Q : {measure set X -> \bar real_realType}.
Hypothesis Q1 : Q setT = 1%E.
Variable Lq : 'I_n -> X -> R.
Hypothesis iL : forall j, (P j).-integrable setT (EFin \o Lq j).
Hypothesis mE : forall j,
  measurable_fun setT ((fun x => exp (- Lq j x)) : X -> real_realType).
Hypothesis dQ : forall j A, measurable A ->
  Q A = (\int[P j]_(x in A) (exp (- Lq j x))%:E)%E.

Local Open Scope R_scope.

(* I(J*; W) <= 1/(n ln 2) sum_j E_{P_j}[Lq_j] bits, for any reference
   probability Q with dQ/dP_j = exp(-Lq_j). *)
Theorem prop2_meas_anyQ :
  MIobs (meas_obs P1 n0)
    <= / (INR n * ln 2) * \sum_j fine (\int[P j]_x (Lq j x)%:E)%E.
Proof.
have l2 := ln2_pos.
have nR : 0 < INR n by apply: lt_0_INR; apply/ssrnat.ltP.
apply: MIobs_least => T q mq.
rewrite meas_obs_quantised.
set Pq := fun j t => fine (P j (q @^-1` [set t])).
set Qq := fun t => fine (Q (q @^-1` [set t])).
have Pd : forall j, is_dist (Pq j) by move=> j; exact: quantised_dist.
have Q0 : forall t, 0 <= Qq t by move=> t; apply/RlebP; exact: P_ge0.
have Qs : \sum_t Qq t <= 1.
  have := @fine_preimage _ _ Q Q1 T q predT mq; rewrite /= => e.
  rewrite /Qq -e (_ : _ @^-1` _ = setT); last by apply/seteqP; split.
  by rewrite Q1 /=; right.
have QP : forall t, 0 < Pbar Pq t -> 0 < Qq t.
  move=> t bp; case: (Rlt_le_dec 0 (Qq t)) => // h.
  exfalso; have z : forall k, Pq k t = 0.
    move=> k; case: (Rlt_le_dec 0 (Pq k t)) => h2; last by have := (Pd k).1 t; lra.
    by have := cell_pos (P1 k) Q1 (iL k) (mE k) (dQ k) (mq t) h2; rewrite -/(Qq t); lra.
  by move: bp; rewrite /Pbar big1 ?Rmult_0_r => [|k _]; [lra | exact: z].
apply: (Rle_trans _ _ _ (MI_le_KL_any n0 Pd Q0 Qs QP)).
apply: Rmult_le_compat_l.
  by left; apply: Rinv_0_lt_compat; apply: Rmult_lt_0_compat.
apply: leR_sum => j _.
exact: (kl_quantised_le (P1 j) Q1 (iL j) (mE j) (dQ j) mq).
Qed.

End AnyQ.
