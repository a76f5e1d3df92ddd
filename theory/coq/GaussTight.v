(* The tighter variant of Proposition 2 (vista-lab's "prop2-tight" bound,
   theory.content_rate_bound_tight) for the paper's Gaussian channel of
   App. C ("Proof of Proposition 2"), with no premise about divergences.
   Instead of Jensen's pairwise bound of Step 1, the mixture Pbar in
   I(J*; W) = 1/(n ln 2) sum_j KL(P_j || Pbar) is replaced by a single
   reference law Q (KL(P_j || Pbar) <= KL(P_j || Q) after summing over j).

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
     mean equal to mbar = (ln L + (n - 1) ln l) / n (gauss_mix; mbar_mean:
     mbar is the mean of the n means of every P_j; mbarE:
     mbar = ln l + ln kappa / n).  Then
     E_{P_j}[Lq_j] = sum_i (m_i^(j) - mbar)^2 / (2 sigma^2)
                   = (1 - 1/n) (ln kappa)^2 / (2 sigma^2),  kappa = L / l,
     (tight_llr_mean: coordinate j contributes a^2 (1 - 1/n)^2, each of the
     n - 1 others a^2 / n^2, a = ln L - ln l), so
       I(J*; W) <= (1 - 1/n) ln 2 (log2 kappa)^2 / (2 sigma^2)   (bits),
     half of prop2_gaussian's bound (GaussN.v; prop2_gaussian_tight_half).
     Premises: 0 < sigma, 0 < n, 0 < l, 0 < L only.
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

Section GaussTight.
Variable sigma : R.
Hypothesis s0 : 0 < sigma.
Variables (n : nat) (L l : R).
Hypotheses (n0 : (0 < n)%N) (l0 : 0 < l) (L0 : 0 < L).

Local Open Scope R_scope.

(* The mean of the mixture's means: (ln L + (n - 1) ln l) / n. *)
Definition mbar : R := (ln L + (INR n - 1) * ln l) / INR n.

Lemma mbarE : 0 < l -> 0 < L -> (0 < n)%N -> mbar = ln l + ln (L / l) / INR n.
Proof.
move=> l0R L0R nn; have nR : 0 < INR n by apply: lt_0_INR; apply/ssrnat.ltP.
by rewrite ln_div' // /mbar; field; lra.
Qed.

(* mbar is the mean of the n coordinate means of P_j, for every j. *)
Lemma mbar_mean (j : 'I_n) : mbar = / INR n * \sum_(i < n) chan_means L l j i.
Proof.
have nR : 0 < INR n by apply: lt_0_INR; apply/ssrnat.ltP; exact: (leq_ltn_trans (leq0n j)).
rewrite (eq_bigr (fun i => ln l + (if i == j then ln L - ln l else 0))); last first.
  by move=> i _; rewrite /chan_means (_ : ((i : nat) == j) = (i == j)) //; case: (i == j); ring.
by rewrite big_split /= sumR_constT card_ord sumR_delta /mbar; field; lra.
Qed.

(* The reference law Q: n independent coordinates, each N(mbar, sigma^2). *)
Definition gauss_mix := gprod (gauss_prob s0) n.-1 (fun _ => mbar).

Lemma gauss_mix_prob : gauss_mix setT = 1%E.
Proof. exact: gprod_prob. Qed.

(* Lq_j = log dP_j/dQ = sum_i gauss_llr (m_i^(j)) mbar (w_i). *)
Definition tight_llr (j : 'I_n) :=
  @Lam _ gauss_space (gauss_llr sigma) n.-1 (chan_means L l j) (fun _ => mbar).

Let props (j : 'I_n) := Lam_props (gauss_prob s0) (@gauss_change sigma) (gauss_llr_integrable s0)
  (@gauss_llr_measurable sigma) (gauss_llr_mean s0) n.-1 (chan_means L l j) (fun _ => mbar).

Lemma tight_llr_integrable j :
  (gauss_chan s0 L l j).-integrable setT (EFin \o tight_llr j).
Proof. by case: (props j). Qed.

Lemma tight_llr_measurable j :
  measurable_fun setT (fun x => exp (- tight_llr j x) : real_realType).
Proof. by case: (props j). Qed.

Lemma tight_change j A : measurable A ->
  gauss_mix A = (\int[gauss_chan s0 L l j]_(x in A) (exp (- tight_llr j x))%:E)%E.
Proof. by case: (props j) => _ _ h _; exact: h. Qed.

(* E_{P_j}[Lq_j] = sum_i (m_i^(j) - mbar)^2 / (2 sigma^2)
                 = (1 - 1/n) (ln kappa)^2 / (2 sigma^2). *)
Lemma tight_llr_mean j :
  fine (\int[gauss_chan s0 L l j]_x (tight_llr j x)%:E)%E
  = (1 - / INR n) * (ln (L / l)) ^ 2 / (2 * sigma ^ 2).
Proof.
have s0R : 0 < sigma by apply/RltP.
have l0R : 0 < l by apply/RltP.
have L0R : 0 < L by apply/RltP.
have nR : 0 < INR n by apply: lt_0_INR; apply/ssrnat.ltP.
case: (props j) => _ _ _ ->; rewrite /=.
have jN : (j < n.-1.+1)%N by rewrite prednK.
set c := fun a => (a - mbar) * (a - mbar) / (2 * (sigma * sigma)).
have e (i : 'I_n.-1.+1) :
    (chan_means L l j i - mbar) * (chan_means L l j i - mbar) / (2 * (sigma * sigma))
    = c (ln l) + (if i == Ordinal jN then c (ln L) - c (ln l) else 0).
  rewrite /chan_means (_ : ((i : nat) == j) = (i == Ordinal jN)) //.
  by case: (i == Ordinal jN); rewrite /c; ring.
change (\big[Rplus/0]_(i < n.-1.+1)
    ((chan_means L l j i - mbar) * (chan_means L l j i - mbar) / (2 * (sigma * sigma)))
  = (1 - / INR n) * (ln (L / l)) ^ 2 / (2 * sigma ^ 2)).
rewrite (eq_bigr _ (fun i _ => e i)) big_split /= sumR_constT card_ord sumR_delta.
rewrite prednK // ln_div' // /c /mbar.
field; split; lra.
Qed.

(* Proposition 2, tight variant (App. C), for the paper's Gaussian channel:
   I(J*; W) <= (1 - 1/n) ln 2 (log2 kappa)^2 / (2 sigma^2) bits, kappa = L / l. *)
Theorem prop2_gaussian_tight :
  MIobs (meas_obs (gauss_chan_prob s0 L l) n0)
    <= (1 - / INR n) * ln 2 * (log2 (L / l)) ^ 2 / (2 * sigma ^ 2).
Proof.
have s0R : 0 < sigma by apply/RltP.
have nR : 0 < INR n by apply: lt_0_INR; apply/ssrnat.ltP.
have l2 := ln2_pos.
apply: (Rle_trans _ _ _ (prop2_meas_anyQ (gauss_chan_prob s0 L l) n0 gauss_mix_prob
          tight_llr_integrable tight_llr_measurable tight_change)).
rewrite (eq_bigr _ (fun j _ => tight_llr_mean j)) sumR_constT card_ord.
right; rewrite /log2; field; repeat split; lra.
Qed.

(* The tight bound is half of Proposition 2's (1 - 1/n) bound (prop2_gaussian). *)
Lemma prop2_gaussian_tight_half :
  (1 - / INR n) * ln 2 * (log2 (L / l)) ^ 2 / (2 * sigma ^ 2)
  = (1 - / INR n) * ((log2 (L / l)) ^ 2 / sigma ^ 2 * ln 2) / 2.
Proof.
have s0R : 0 < sigma by apply/RltP.
have nR : 0 < INR n by apply: lt_0_INR; apply/ssrnat.ltP.
by field; split; lra.
Qed.

End GaussTight.
