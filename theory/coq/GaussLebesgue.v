(* Facts about the Lebesgue integral on the real line used to build the
   one-dimensional Gaussian law N(mu, sigma^2) (paper App. C, "Proof of
   Proposition 2"): the Gaussian kernel exp(-x^2/(2 sigma^2)), its
   measurability, translation and reflection invariance of Lebesgue measure,
   finiteness and positivity of the kernel's integral (the normalising
   constant is NOT computed), finiteness of its absolute first moment and
   vanishing of its first moment.

   Uses mathcomp-analysis 0.6.0 over Coq's real numbers (Rstruct); exp is
   Coq's (Rtrigo_def).  Lebesgue measure is lebesgue_measure of
   lebesgue_measure.v. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import all_ssreflect all_algebra finmap.
From mathcomp Require Import boolp classical_sets functions cardinality mathcomp_extra.
From mathcomp Require Import reals ereal signed topology normedtype sequences esum measure lebesgue_measure lebesgue_integral numfun Rstruct.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Import Order.TTheory GRing.Theory Num.Theory.

Local Open Scope classical_set_scope.
Local Open Scope ring_scope.

Local Notation leb := (@lebesgue_measure real_realType).

(* ------------------------------------------------------------------ *)
(* (1) The kernel.                                                     *)

Section kernel_def.
Local Open Scope R_scope.
Definition gauss_kernel (sigma x : R) : R := exp (- (x * x) / (2 * (sigma * sigma))).
End kernel_def.

Lemma gauss_kernel_gt0 sigma x : 0 < gauss_kernel sigma x.
Proof. by apply/RltP; exact: exp_pos. Qed.

Lemma continuous_gauss_kernel sigma :
  continuous (gauss_kernel sigma : real_realType -> real_realType).
Proof.
move=> x; apply/continuity_ptE; rewrite /gauss_kernel.
apply: (continuity_pt_comp (fun x => Rdiv (Ropp (Rmult x x)) (Rmult 2 (Rmult sigma sigma))) exp).
  rewrite /Rdiv; apply: continuity_pt_mult; last exact: continuity_pt_const.
  apply: continuity_pt_opp; apply: continuity_pt_mult; exact: derivable_continuous_pt (derivable_pt_id _).
exact: derivable_continuous_pt (derivable_pt_exp _).
Qed.

Lemma measurable_gauss_kernel sigma :
  measurable_fun setT (gauss_kernel sigma : real_realType -> real_realType).
Proof. apply: continuous_measurable_fun; exact: continuous_gauss_kernel. Qed.
