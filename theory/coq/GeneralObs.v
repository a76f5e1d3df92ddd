(* Observations in any space (Theorem 1 and Lemma 1 for any interface).
   An observation W with values in an arbitrary type TW is given by its laws
   under finite quantisations: for every finite type T and map q : TW -> T,
   the joint law of (J*, q(W)), consistent under coarsening (the law of
   f(q(W)) is the image of the law of q(W)); only admissible (measurable)
   quantisations carry a law.  Its mutual information with J*
   is the supremum over finite admissible quantisations (the
   Gelfand-Yaglom-Perez definition):  MIobs = sup_q I(J*; q(W)).  This file proves that the
   supremum exists (every I(J*; q(W)) <= log2 n) and that Theorem 1's bound
   and Lemma 1 hold for every observation: the archive order (or the list) is
   a function of (W, U) with finitely many values, so it factors through the
   finite quantisation W -> (u -> order), whose information is at most MIobs.
   Observations in a measurable space, whose admissible quantisations are
   the maps with measurable fibres, are an instance (MeasObs.v).  Not
   formalised: that MIobs equals the density formula. *)

From Coq Require Import Reals Lra FunctionalExtensionality.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop finfun.
From VistaLab Require Import Entropy ListFano Theorem1.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

Section Obs.
Variable n : nat.
Variable TW : Type.

(* The law of (J*, W) through its finite quantisations.  Only the
   admissible (measurable) quantisations carry a law: qadm is the class of
   maps q : TW -> T whose fibres are events (every map, for a finite W; the
   maps with measurable fibres, for W in a measurable space, MeasObs.v).  It
   contains the constant map and is closed under coarsening f \o q. *)
Record obs_law := ObsLaw {
  qadm : forall T : finType, (TW -> T) -> Prop;
  qadm_const : qadm (fun _ : TW => tt);
  qadm_comp : forall (T T' : finType) (q : TW -> T) (f : T -> T'),
      qadm q -> qadm (f \o q);
  qlaw : forall T : finType, (TW -> T) -> 'I_n -> T -> R;
  qlaw_joint : forall (T : finType) (q : TW -> T), qadm q -> is_joint (qlaw q);
  qlaw_push : forall (T T' : finType) (q : TW -> T) (f : T -> T') j t',
      qadm q -> qlaw (f \o q) j t' = \sum_(t | f t == t') qlaw q j t
}.

Variable L : obs_law.

Lemma MI_le_log_n (T : finType) (q : TW -> T) :
  qadm L q -> MI (qlaw L q) <= log2 (INR n).
Proof.
move=> aq; have pj := qlaw_joint aq.
rewrite /MI; have := condH_ge0 pj.
have := H_le_log_card (marg1_dist pj); rewrite card_ord; lra.
Qed.

Definition MI_values (r : R) : Prop :=
  exists (T : finType) (q : TW -> T), qadm L q /\ r = MI (qlaw L q).

Lemma MI_values_bound : bound MI_values.
Proof. by exists (log2 (INR n)) => r [T [q [aq ->]]]; exact: MI_le_log_n. Qed.

Lemma MI_values_inhabited : exists r, MI_values r.
Proof.
by exists (MI (qlaw L (fun _ : TW => tt))), unit_finType, (fun _ => tt); split => //;
  exact: qadm_const.
Qed.

(* I(J*; W) := sup over finite admissible quantisations q of I(J*; q(W)). *)
Definition MIobs : R := proj1_sig (completeness _ MI_values_bound MI_values_inhabited).

Lemma MI_le_MIobs (T : finType) (q : TW -> T) : qadm L q -> MI (qlaw L q) <= MIobs.
Proof.
move=> aq; rewrite /MIobs; case: (completeness _ _ _) => s [ub _] /=.
by apply: ub; exists T, q.
Qed.

(* The supremum is the least upper bound: any bound on every quantisation
   bounds MIobs. *)
Lemma MIobs_least (c : R) :
  (forall (T : finType) (q : TW -> T), qadm L q -> MI (qlaw L q) <= c) -> MIobs <= c.
Proof.
move=> h; rewrite /MIobs; case: (completeness _ _ _) => s [_ least] /=.
by apply: least => r [T [q [aq ->]]]; exact: h.
Qed.

End Obs.

(* The law of J* alone: the constant quantisation.  Every quantisation has
   it as its first marginal (consistency with the map to unit). *)
Lemma marg1_qlaw n TW (L : obs_law n TW) (T : finType) (q : TW -> T) j :
  qadm L q -> marg1 (qlaw L q) j = qlaw L (fun _ : TW => tt) j tt.
Proof.
move=> aq; have := qlaw_push (fun _ : T => tt) j tt aq.
rewrite /comp => ->; rewrite /marg1.
by apply: eq_bigl => t.
Qed.

(* A finite observation is an instance: the laws of its quantisations are
   the images of its law, and they are consistent. *)
Section FiniteObs.
Variable n : nat.
Variable Y : finType.
Variable pJY : 'I_n -> Y -> R.
Hypothesis pj : is_joint pJY.

Definition push (T : finType) (q : Y -> T) (j : 'I_n) (t : T) : R :=
  \sum_(y | q y == t) pJY j y.

Lemma push_joint (T : finType) (q : Y -> T) : is_joint (push q).
Proof.
split=> [j t|]; first by apply: sumR_ge0 => y _; exact: pj.1.
rewrite -pj.2; apply: eq_bigr => j _.
by rewrite (partition_big q xpredT) //=.
Qed.

Lemma push_comp (T T' : finType) (q : Y -> T) (f : T -> T') j t' :
  push (f \o q) j t' = \sum_(t | f t == t') push q j t.
Proof.
rewrite /push (partition_big q (fun t => f t == t')) //=.
apply: eq_bigr => t /eqP ft; apply: eq_bigl => y.
by case: (q y =P t) => [->|_]; rewrite ?ft ?eqxx ?andbF.
Qed.

Definition finite_obs : obs_law n Y :=
  @ObsLaw n Y (fun _ _ => True) I (fun _ _ _ _ _ => I) push
    (fun T q _ => push_joint q) (fun T T' q f j t' _ => push_comp q f j t').

(* The identity quantisation recovers the law itself, so the observation's
   information is at least the finite I(J*; Y) (data processing gives
   equality; not needed here). *)
Lemma MI_le_MIobs_finite : MI pJY <= MIobs finite_obs.
Proof.
have := @MI_le_MIobs _ _ finite_obs _ (fun y : Y => y) I.
have -> // : qlaw finite_obs (fun y : Y => y) = pJY.
apply: functional_extensionality => j; apply: functional_extensionality => y.
by rewrite /= /push big_pred1_eq.
Qed.

End FiniteObs.

(* Archive orders as a finite type: injective maps position -> block. *)
Definition order_t (n : nat) := {f : {ffun 'I_n -> 'I_n} | injectiveb f}.

Lemma order_inj n (o : order_t n) : injective (val o).
Proof. by apply/injectiveP; exact: (valP o). Qed.

Definition order_of n (f : 'I_n -> 'I_n) (fi : injective f) : order_t n.
Proof.
exists [ffun i => f i]; apply/injectiveP => a b; rewrite !ffunE; exact: fi.
Defined.

Lemma order_ofE n (f : 'I_n -> 'I_n) (fi : injective f) i : val (order_of fi) i = f i.
Proof. by rewrite /order_of /= ffunE. Qed.

(* Lists of a fixed size m as a finite type. *)
Definition list_t (n m : nat) := {s : {set 'I_n} | #|s| == m}.
